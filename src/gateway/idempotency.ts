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
      const claimed = await this.claim(sessionKey, key, fingerprint).catch((err: unknown) => {
        settle(Promise.reject(err));
        throw err;
      });
      if ("replay" in claimed) {
        settle(Promise.resolve(claimed.replay));
        return { ...claimed.replay, replayed: true };
      }
      const { keyed, running } = claimed;
      const result = turn(keyed);
      settle(result);
      const finished = await result.catch(async (err: unknown) => {
        // Nothing was answered: the key may be used again.
        await this.save(sessionKey, key, running, undefined);
        throw err;
      });
      if (finished.reply.interrupted) {
        // Cut off from the store: not answered; a retry with this key (on any worker) resumes it.
        const { owner: _owner, ...resumable } = running;
        await this.save(sessionKey, key, running, { ...resumable, at: this.now() }).catch(() => undefined);
        return { ...finished, replayed: false };
      }
      const answered: KeyRecord = { ...running, at: this.now(), status: "done", result: { reply: storedReply(finished.reply), timedOut: finished.timedOut } };
      await this.save(sessionKey, key, running, answered);
      return { ...finished, replayed: false };
    } finally {
      this.running.delete(id);
    }
  }

  /**
   * Takes the key for this request, or finds the answer it already has. The record is read, then
   * written only if it is still what was read (a compare-and-set inside the store's session
   * lock): two workers that see the key free at the same moment cannot both start a turn.
   */
  private async claim(sessionKey: string, key: string, fingerprint: string): Promise<{ replay: GatewayTurnResult } | { keyed: KeyedTurn; running: KeyRecord }> {
    for (;;) {
      const known = await this.settledElsewhere(sessionKey, key);
      let keyed: KeyedTurn = { messageId: messageId(), resume: false };
      if (known) {
        this.checkSame(known.fingerprint, fingerprint);
        if (known.status === "done" && known.result) return { replay: known.result };
        // Its worker died mid-turn: the message is stored; a store that can reopen the turn answers it now.
        if (!known.messageId || !this.store.reopenInterruptedTurn) throw interruptedError();
        keyed = { messageId: known.messageId, resume: true };
      }
      const owner = await this.store.workerId?.();
      const running: KeyRecord = { fingerprint, at: this.now(), status: "running", messageId: keyed.messageId, ...(owner ? { owner } : {}) };
      const won = await this.store.mutateMetadata(sessionKey, METADATA_KEY, (current) => {
        const records = asRecords(current);
        return sameClaim(records[key], known) ? kept({ ...records, [key]: running }, this.now()) : current;
      });
      if (sameClaim(asRecords(won)[key], running)) return { keyed, running };
      // Another worker took the key between the read and the write: look again (it is now running there).
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
    return asRecords((await this.store.sessionMetadata(sessionKey))?.[METADATA_KEY]);
  }

  /**
   * Replaces (or, with `record` undefined, forgets) this request's record — unless another
   * request has taken the key since (a worker that lost its lease must not overwrite the one
   * that resumed its turn). Other keys of the session are left as they are.
   */
  private async save(sessionKey: string, key: string, mine: KeyRecord, record: KeyRecord | undefined): Promise<void> {
    await this.store.mutateMetadata(sessionKey, METADATA_KEY, (current) => {
      const records = asRecords(current);
      const now = records[key];
      if (now && !sameClaim(now, mine)) return current;
      const next = { ...records };
      if (record) next[key] = record;
      else delete next[key];
      return kept(next, this.now());
    });
  }
}

function asRecords(raw: unknown): KeyRecords {
  return raw && typeof raw === "object" && !Array.isArray(raw) ? (raw as KeyRecords) : {};
}

/** Whether two records are the same claim of a key (both absent counts). */
function sameClaim(a: KeyRecord | undefined, b: KeyRecord | undefined): boolean {
  if (!a || !b) return a === b;
  return a.at === b.at && a.status === b.status && a.owner === b.owner && a.messageId === b.messageId && a.fingerprint === b.fingerprint;
}

/** Drops expired records and the oldest past the cap. */
function kept(records: KeyRecords, now: number): KeyRecords {
  const cutoff = now - TTL_MS;
  return Object.fromEntries(
    Object.entries(records)
      .filter(([, r]) => r.at >= cutoff)
      .sort(([, a], [, b]) => b.at - a.at)
      .slice(0, MAX_KEYS),
  );
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
