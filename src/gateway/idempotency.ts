/**
 * `Idempotency-Key` on `POST /v1/chat/completions` and the web UI's `POST /api/chat` (the IETF httpapi draft's semantics): a
 * request repeated with the same key in the same session never starts a second turn and never
 * stores the user message twice. While the first is running the repeat waits for it; once it
 * finished the repeat gets its answer again (errors included: the message is already in the
 * session, so running it again would store it twice). A key reused with a different request
 * body is a 422; a first attempt that a restart interrupted is a 409 saying so.
 *
 * Keys are kept in the session's metadata (`idempotency`), so a restarted gateway (or another
 * worker on the same PostgreSQL) still knows them: the newest 100 per session, for 24 hours.
 */
import { createHash } from "node:crypto";
import { messageId } from "../core/ids.js";
import type { TurnReply } from "../agent/turn-processor.js";
import type { SessionStore } from "../session/types.js";
import { ApiError } from "./errors.js";
import type { GatewayTurnResult } from "./run-turn.js";

const METADATA_KEY = "idempotency";
const MAX_KEYS = 100;
const TTL_MS = 24 * 60 * 60 * 1000;
const MAX_KEY_LENGTH = 255;

/** What a repeat gets back: the parts of the reply the API answers with. */
type StoredReply = Pick<TurnReply, "content" | "sessionKey" | "stopReason" | "toolsUsed" | "usage" | "externalToolCalls" | "warnings" | "error" | "errorKind" | "turnId">;

interface KeyRecord {
  fingerprint: string;
  at: number;
  status: "running" | "done";
  result?: { reply: StoredReply; timedOut: boolean };
  /** The worker running it (stores shared by several workers). */
  owner?: string;
  /** The id of the user message the request stores (a retry resumes its turn). */
  messageId?: string;
}

/** How the turn of a keyed request runs: its user message's id, and whether it resumes an interrupted turn. */
export interface KeyedTurn {
  messageId: string;
  resume: boolean;
}

/** Between looks at a request another worker is running. */
const WAIT_POLL_MS = 250;

type KeyRecords = Record<string, KeyRecord>;

export interface IdempotentOutcome extends GatewayTurnResult {
  /** The answer of an earlier request with this key (no turn ran for this one). */
  replayed: boolean;
}

/** The header's key, checked (1–255 visible characters), or undefined when absent. */
export function idempotencyKeyOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const key = header.trim().replace(/^"(.*)"$/, "$1");
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ApiError(400, `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters`, "invalid_request_error", "invalid_idempotency_key");
  }
  return key;
}

/** The request body's fingerprint; whether the answer is streamed does not change the request. */
export function requestFingerprint(body: unknown): string {
  const { stream: _s, stream_options: _o, ...rest } = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  return createHash("sha256").update(canonical(rest)).digest("base64url");
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export class IdempotentRequests {
  /** Requests running in this process, by session and key. */
  private readonly running = new Map<string, { fingerprint: string; done: Promise<GatewayTurnResult> }>();

  constructor(
    private readonly store: SessionStore,
    private readonly now: () => number = Date.now,
  ) {}

  async run(sessionKey: string, key: string, fingerprint: string, turn: (keyed: KeyedTurn) => Promise<GatewayTurnResult>): Promise<IdempotentOutcome> {
    const id = `${sessionKey}\n${key}`;
    const live = this.running.get(id);
    if (live) {
      this.checkSame(live.fingerprint, fingerprint);
      return { ...(await live.done), replayed: true };
    }
    // Claimed before the first await: a repeat arriving meanwhile waits on this one.
    let settle!: (r: Promise<GatewayTurnResult>) => void;
    const done = new Promise<GatewayTurnResult>((resolve) => (settle = resolve));
    done.catch(() => undefined);
    this.running.set(id, { fingerprint, done });
    try {
      const known = await this.settledElsewhere(sessionKey, key);
      let keyed: KeyedTurn = { messageId: messageId(), resume: false };
      if (known) {
        this.checkSame(known.fingerprint, fingerprint);
        if (known.status === "done" && known.result) {
          settle(Promise.resolve(known.result));
          return { ...known.result, replayed: true };
        }
        // Its worker died mid-turn: the message is stored; a store that can reopen the turn answers it now.
        if (known.messageId && this.store.reopenInterruptedTurn) keyed = { messageId: known.messageId, resume: true };
      }
      if (known && !keyed.resume) {
        const interrupted = interruptedError();
        settle(Promise.reject(interrupted));
        throw interrupted;
      }
      const owner = await this.store.workerId?.();
      const running: KeyRecord = { fingerprint, at: this.now(), status: "running", messageId: keyed.messageId, ...(owner ? { owner } : {}) };
      await this.save(sessionKey, key, running);
      const result = turn(keyed);
      settle(result);
      const finished = await result.catch(async (err: unknown) => {
        // Nothing was answered: the key may be used again.
        await this.save(sessionKey, key, undefined);
        throw err;
      });
      if (finished.reply.interrupted) {
        // Cut off from the store: not answered; a retry with this key (on any worker) resumes it.
        const { owner: _owner, ...resumable } = running;
        await this.save(sessionKey, key, { ...resumable, at: this.now() }).catch(() => undefined);
        return { ...finished, replayed: false };
      }
      await this.save(sessionKey, key, { ...running, at: this.now(), status: "done", result: { reply: storedReply(finished.reply), timedOut: finished.timedOut } });
      return { ...finished, replayed: false };
    } finally {
      this.running.delete(id);
    }
  }

  /**
   * Refuses, before any answer starts, a key this session already used with another body (422).
   * `run` checks again (and decides whether an unanswered first attempt is waited for, resumed
   * or refused); this lets a streamed answer fail with a real HTTP status instead of an event.
   */
  async check(sessionKey: string, key: string, fingerprint: string): Promise<void> {
    const live = this.running.get(`${sessionKey}\n${key}`);
    if (live) return this.checkSame(live.fingerprint, fingerprint);
    const known = (await this.records(sessionKey))[key];
    if (!known) return;
    this.checkSame(known.fingerprint, fingerprint);
  }

  /**
   * The key's record once no live worker is running it: a request another live worker runs is
   * waited for (until it is answered, forgotten after a failure, or that worker dies).
   */
  private async settledElsewhere(sessionKey: string, key: string): Promise<KeyRecord | undefined> {
    for (;;) {
      const known = (await this.records(sessionKey))[key];
      if (!known || known.status !== "running" || !known.owner || !this.store.workerAlive) return known;
      if (known.owner === (await this.store.workerId?.())) return known;
      if (!(await this.store.workerAlive(known.owner))) return known;
      await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
    }
  }

  private checkSame(first: string, now: string): void {
    if (first !== now) {
      throw new ApiError(422, "This Idempotency-Key was already used with a different request body", "invalid_request_error", "idempotency_key_reused");
    }
  }

  private async records(sessionKey: string): Promise<KeyRecords> {
    const metadata = await this.store.sessionMetadata(sessionKey);
    const raw = metadata?.[METADATA_KEY];
    return raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as KeyRecords) : {};
  }

  /** Writes (or, with `record` undefined, forgets) one key; drops expired and the oldest past the cap. */
  private async save(sessionKey: string, key: string, record: KeyRecord | undefined): Promise<void> {
    const records = { ...(await this.records(sessionKey)) };
    if (record) records[key] = record;
    else delete records[key];
    const cutoff = this.now() - TTL_MS;
    const kept = Object.entries(records)
      .filter(([, r]) => r.at >= cutoff)
      .sort(([, a], [, b]) => b.at - a.at)
      .slice(0, MAX_KEYS);
    await this.store.updateMetadata(sessionKey, { [METADATA_KEY]: Object.fromEntries(kept) });
  }
}

function interruptedError(): ApiError {
  return new ApiError(
    409,
    "The first request with this Idempotency-Key was interrupted before it was answered (the gateway stopped); its message is kept in the session. Send a new key to ask again.",
    "invalid_request_error",
    "idempotency_key_interrupted",
  );
}

function storedReply(reply: TurnReply): StoredReply {
  const { content, sessionKey, stopReason, toolsUsed, usage, externalToolCalls, warnings, error, errorKind, turnId } = reply;
  return {
    content,
    sessionKey,
    stopReason,
    toolsUsed,
    usage,
    ...(externalToolCalls ? { externalToolCalls } : {}),
    ...(warnings ? { warnings } : {}),
    ...(error !== undefined ? { error } : {}),
    ...(errorKind ? { errorKind } : {}),
    ...(turnId ? { turnId } : {}),
  };
}
