/**
 * The wire form of a cluster event on PostgreSQL NOTIFY, whose payload must stay under 8000
 * bytes. An event is JSON; when it does not fit one notification it is cut into chunks, each
 * `<worker>|<event id>|<index>|<count>|<topic>|<piece>`, cut at UTF-8 character boundaries. The
 * chunks of one event are sent in one statement (one transaction), so they arrive together and
 * in order; the `Reassembler` still keys them by sender and event id, because events of several
 * workers may interleave on a listener.
 */

/** Bytes a notification payload may carry (the server's limit is 8000; the header takes the rest). */
export const CHUNK_BYTES = 7_000;

export interface RelayFrame {
  worker: string;
  event: string;
  index: number;
  count: number;
  topic: string;
  piece: string;
}

/** Worker ids, event ids and topics are plain tokens: no `|` can hide in them. */
const TOKEN = /^[A-Za-z0-9_.:-]{1,64}$/;

export function isRelayToken(value: string): boolean {
  return TOKEN.test(value);
}

/** The notification payloads of one event (one unless its JSON passes `chunkBytes`). */
export function encodeEvent(worker: string, event: string, topic: string, json: string, chunkBytes = CHUNK_BYTES): string[] {
  for (const token of [worker, event, topic]) if (!isRelayToken(token)) throw new Error(`invalid relay token ${JSON.stringify(token)}`);
  const pieces = splitUtf8(json, chunkBytes);
  return pieces.map((piece, index) => `${worker}|${event}|${index}|${pieces.length}|${topic}|${piece}`);
}

export function decodeFrame(payload: string): RelayFrame | undefined {
  const parts: string[] = [];
  let at = 0;
  for (let i = 0; i < 5; i++) {
    const bar = payload.indexOf("|", at);
    if (bar < 0) return undefined;
    parts.push(payload.slice(at, bar));
    at = bar + 1;
  }
  const [worker, event, index, count, topic] = parts as [string, string, string, string, string];
  const i = Number(index);
  const n = Number(count);
  if (!Number.isInteger(i) || !Number.isInteger(n) || i < 0 || n < 1 || i >= n) return undefined;
  return { worker, event, index: i, count: n, topic, piece: payload.slice(at) };
}

/** Cuts `text` into pieces of at most `maxBytes` UTF-8 bytes, never inside a character. */
export function splitUtf8(text: string, maxBytes: number): string[] {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return [text];
  const pieces: string[] = [];
  let start = 0;
  while (start < bytes.length) {
    let end = Math.min(start + maxBytes, bytes.length);
    // A continuation byte (10xxxxxx) means the cut would split a character: step back to its start.
    while (end < bytes.length && end > start && (bytes[end]! & 0xc0) === 0x80) end--;
    pieces.push(bytes.subarray(start, end).toString("utf8"));
    start = end;
  }
  return pieces;
}

interface Partial {
  pieces: string[];
  received: number;
  topic: string;
}

/**
 * Puts chunked events back together. Partial events are dropped when `maxPending` is passed
 * (oldest first) or `clear()` is called (the connection broke: their other chunks are lost).
 */
export class Reassembler {
  private readonly pending = new Map<string, Partial>();

  constructor(private readonly maxPending = 64) {}

  /** The whole event once its last chunk arrived; undefined until then (or for a bad frame). */
  add(frame: RelayFrame): { topic: string; json: string } | undefined {
    if (frame.count === 1) return { topic: frame.topic, json: frame.piece };
    const key = `${frame.worker}|${frame.event}`;
    let partial = this.pending.get(key);
    if (!partial) {
      partial = { pieces: new Array<string>(frame.count), received: 0, topic: frame.topic };
      this.pending.set(key, partial);
      while (this.pending.size > this.maxPending) this.pending.delete(this.pending.keys().next().value!);
    }
    if (partial.pieces.length !== frame.count) return undefined;
    if (partial.pieces[frame.index] === undefined) partial.received++;
    partial.pieces[frame.index] = frame.piece;
    if (partial.received < frame.count) return undefined;
    this.pending.delete(key);
    return { topic: partial.topic, json: partial.pieces.join("") };
  }

  get size(): number {
    return this.pending.size;
  }

  clear(): void {
    this.pending.clear();
  }
}
