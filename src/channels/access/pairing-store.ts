/**
 * Pairing: how an unknown direct-message sender becomes a known one without editing config.
 * The sender gets a short code; the owner approves it (`/pairing approve <code>` or
 * `nanobot pairing approve <code>`). State lives in one JSON file so the CLI and running
 * gateways share it; every read goes to the file, every write is atomic, and a change (read,
 * modify, write) holds a lock file, so gateway workers sharing a home lose none of each
 * other's codes or approvals.
 */
import { randomInt } from "node:crypto";
import { join } from "node:path";
import { withFileLock } from "../file-lock.js";
import { readJsonFile, writeJsonFileAtomic } from "../json-file.js";
import type { SenderIdentity } from "../types.js";

/** No 0/O, 1/I/L: codes are read aloud and retyped. */
export const PAIRING_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
export const PAIRING_CODE_LENGTH = 8;
export const PAIRING_TTL_MS = 10 * 60 * 1000;
/** Pending requests kept per channel; a flood of strangers cannot grow the file without bound. */
const MAX_PENDING_PER_CHANNEL = 50;

export interface PendingPairing {
  code: string;
  channel: string;
  senderId: string;
  username?: string;
  chatId?: string;
  createdAt: number;
  expiresAt: number;
}

export interface ApprovedSender {
  channel: string;
  senderId: string;
  username?: string;
  approvedAt: number;
}

interface PairingState {
  version: 1;
  pending: PendingPairing[];
  approved: ApprovedSender[];
}

export interface PairingRequest {
  channel: string;
  senderId: string;
  username?: string;
  chatId?: string;
}

export interface PairingStoreOptions {
  /** The JSON file, usually `pairingStorePath(home)`. */
  path: string;
  now?: () => number;
  ttlMs?: number;
  /** Uniform integer in [0, max); injectable for deterministic codes in tests. */
  randomInt?: (max: number) => number;
}

export function pairingStorePath(home: string): string {
  return join(home, "pairing.json");
}

export class PairingStore {
  readonly path: string;
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly random: (max: number) => number;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(options: PairingStoreOptions) {
    this.path = options.path;
    this.now = options.now ?? Date.now;
    this.ttlMs = options.ttlMs ?? PAIRING_TTL_MS;
    this.random = options.randomInt ?? ((max) => randomInt(max));
  }

  /** The live code for this sender, creating one when none is pending. */
  requestCode(request: PairingRequest): Promise<{ code: string; expiresAt: number; isNew: boolean }> {
    return this.mutate((state) => {
      const existing = state.pending.find((p) => p.channel === request.channel && p.senderId === request.senderId);
      if (existing) return { code: existing.code, expiresAt: existing.expiresAt, isNew: false };
      const taken = new Set(state.pending.map((p) => p.code));
      let code = this.newCode();
      while (taken.has(code)) code = this.newCode();
      const createdAt = this.now();
      const entry: PendingPairing = { code, channel: request.channel, senderId: request.senderId, createdAt, expiresAt: createdAt + this.ttlMs };
      if (request.username) entry.username = request.username;
      if (request.chatId) entry.chatId = request.chatId;
      const sameChannel = state.pending.filter((p) => p.channel === request.channel);
      if (sameChannel.length >= MAX_PENDING_PER_CHANNEL) state.pending.splice(state.pending.indexOf(sameChannel[0]!), 1);
      state.pending.push(entry);
      return { code, expiresAt: entry.expiresAt, isNew: true };
    });
  }

  /** Approves a live code; undefined when it is unknown or expired. */
  approve(code: string): Promise<ApprovedSender | undefined> {
    return this.mutate((state) => {
      const pending = takePending(state, code);
      if (!pending) return undefined;
      const approved: ApprovedSender = { channel: pending.channel, senderId: pending.senderId, approvedAt: this.now() };
      if (pending.username) approved.username = pending.username;
      state.approved = state.approved.filter((a) => !(a.channel === approved.channel && a.senderId === approved.senderId));
      state.approved.push(approved);
      return approved;
    });
  }

  /** Drops a pending code; the sender may ask again later. */
  deny(code: string): Promise<PendingPairing | undefined> {
    return this.mutate((state) => takePending(state, code));
  }

  /**
   * Removes approvals matching `sender`: `channel:id`, `channel:@username`, a bare id or a bare
   * `@username` (any channel). Returns what was removed.
   */
  revoke(sender: string): Promise<ApprovedSender[]> {
    return this.mutate((state) => {
      const removed = state.approved.filter((a) => senderMatches(a, sender));
      state.approved = state.approved.filter((a) => !removed.includes(a));
      return removed;
    });
  }

  async isApproved(channel: string, sender: SenderIdentity): Promise<boolean> {
    const state = await this.load();
    return state.approved.some((a) => a.channel === channel && a.senderId === sender.id);
  }

  async list(): Promise<{ pending: PendingPairing[]; approved: ApprovedSender[] }> {
    const state = await this.load();
    return { pending: state.pending, approved: state.approved };
  }

  private newCode(): string {
    let code = "";
    for (let i = 0; i < PAIRING_CODE_LENGTH; i++) code += PAIRING_ALPHABET[this.random(PAIRING_ALPHABET.length)];
    return code;
  }

  /** Reads the file and drops expired codes (not written back until the next mutation). */
  private async load(): Promise<PairingState> {
    const raw = await readJsonFile(this.path);
    const state = parseState(raw, this.path);
    const now = this.now();
    state.pending = state.pending.filter((p) => p.expiresAt > now);
    return state;
  }

  /** Serialises read-modify-write cycles within this process. */
  private mutate<T>(fn: (state: PairingState) => T): Promise<T> {
    const run = this.chain.then(() =>
      withFileLock(this.path, async () => {
        const state = await this.load();
        const result = fn(state);
        await writeJsonFileAtomic(this.path, state);
        return result;
      }),
    );
    this.chain = run.catch(() => undefined);
    return run;
  }
}

function takePending(state: PairingState, code: string): PendingPairing | undefined {
  const wanted = code.trim().toUpperCase();
  const index = state.pending.findIndex((p) => p.code === wanted);
  if (index < 0) return undefined;
  const [pending] = state.pending.splice(index, 1);
  return pending;
}

function senderMatches(approved: ApprovedSender, sender: string): boolean {
  const colon = sender.indexOf(":");
  const channel = colon > 0 ? sender.slice(0, colon) : undefined;
  const who = colon > 0 ? sender.slice(colon + 1) : sender;
  if (channel !== undefined && channel !== approved.channel) return false;
  if (who.startsWith("@")) return approved.username?.toLowerCase() === who.slice(1).toLowerCase();
  return approved.senderId === who;
}

function parseState(raw: unknown, path: string): PairingState {
  if (raw === undefined) return { version: 1, pending: [], approved: [] };
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new Error(`${path}: expected a pairing state object`);
  const obj = raw as { pending?: unknown; approved?: unknown };
  const pending = Array.isArray(obj.pending) ? (obj.pending as PendingPairing[]).filter(isPending) : [];
  const approved = Array.isArray(obj.approved) ? (obj.approved as ApprovedSender[]).filter(isApproved) : [];
  return { version: 1, pending, approved };
}

function isPending(p: PendingPairing): boolean {
  return typeof p === "object" && p !== null && typeof p.code === "string" && typeof p.channel === "string" && typeof p.senderId === "string" && typeof p.expiresAt === "number";
}

function isApproved(a: ApprovedSender): boolean {
  return typeof a === "object" && a !== null && typeof a.channel === "string" && typeof a.senderId === "string";
}
