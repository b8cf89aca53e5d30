/**
 * Messages already parsed from their rows. A message row is never updated, only inserted and
 * deleted, and ids are random and unique, so a row's id (checked against its thread and place)
 * always stands for the same message. Every turn replays the session's history; with this cache
 * it reads only the ids of rows it saw before and parses just the new ones. The same objects
 * coming back turn after turn also keep the token estimator's per-object counts warm.
 *
 * Cached messages are shared by every reader, so they are frozen (the object and its part list):
 * code that edits a replayed message must copy it, as the engine already does.
 */
import type { Message } from "../core/index.js";
import { rowToMessage } from "./rows.js";
import type { MessageRow } from "./rows.js";

/** A row's id and place in its thread, as `[id, seq]`. */
export type RowPlace = readonly [id: string, seq: number];

interface Entry {
  threadId: string;
  seq: number;
  message: Message;
  weight: number;
}

/**
 * Heap the cache may hold, by estimate; then it is cleared. Measured on Node 20: a cached message
 * costs ~310 bytes (its entry, the message, its part list and parts) beside its text, one byte a
 * character, two when any character is beyond Latin-1. 8 MiB hold ~17,000 messages of 150
 * characters: the replay windows (120 messages by default) of ~140 busy sessions.
 */
export const DEFAULT_MAX_CACHED_BYTES = 8 * 2 ** 20;
/** What one cached message costs beside its stored JSON (measured, rounded up). */
const MESSAGE_OVERHEAD_BYTES = 320;
/** Any character a one-byte V8 string cannot hold: its strings take two bytes a character. */
// eslint-disable-next-line no-control-regex
const WIDE = /[^\u0000-\u00ff]/;

export class ParsedMessages {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

  constructor(private readonly maxBytes = DEFAULT_MAX_CACHED_BYTES) {}

  /** The message of the row at `place` in `threadId`, if it was parsed before. */
  get(threadId: string, place: RowPlace): Message | undefined {
    // Indexed, not destructured: this runs for every replayed message of every turn.
    const entry = this.entries.get(place[0]);
    return entry && entry.threadId === threadId && entry.seq === place[1] ? entry.message : undefined;
  }

  /** Parses the row and remembers the result. */
  parse(row: MessageRow): Message {
    const message = rowToMessage(row);
    Object.freeze(message.content);
    Object.freeze(message);
    const stored = row.content.length + (row.tool_calls?.length ?? 0) + (row.flags?.length ?? 0) + (row.usage?.length ?? 0);
    const weight = MESSAGE_OVERHEAD_BYTES + (WIDE.test(row.content) ? 2 * stored : stored);
    // A wholesale clear costs one re-parse of the sessions in use; an LRU would cost every hit.
    if (this.bytes + weight > this.maxBytes) this.clear();
    const previous = this.entries.get(row.id);
    if (previous) this.bytes -= previous.weight;
    this.entries.set(row.id, { threadId: row.thread_id, seq: row.seq, message, weight });
    this.bytes += weight;
    return message;
  }

  /** The row's message: the one parsed before, or parsed now. */
  messageOf(row: MessageRow): Message {
    return this.get(row.thread_id, [row.id, row.seq]) ?? this.parse(row);
  }

  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
