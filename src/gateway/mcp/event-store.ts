/**
 * Resumable SSE for `/mcp`: the SDK transport stores every event it sends on a stream here, and
 * a client that lost the stream (or was told to poll, SEP-1699) reconnects with `Last-Event-ID`
 * and gets what it missed. One store per MCP session, so a client can only replay its own
 * session's events. Bounded three ways so it cannot grow without limit: events per stream,
 * streams per store, and age. A resume from an event that has already been dropped is refused
 * (the client would silently miss messages otherwise).
 */
import type { EventId, EventStore, StreamId } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export interface EventStoreLimits {
  /** Newest events kept per stream (default 200). */
  maxEventsPerStream?: number;
  /** Streams kept; the least recently written one goes first (default 100). */
  maxStreams?: number;
  /** Events older than this are dropped (default 5 minutes). */
  ttlMs?: number;
  /** Clock seam for tests. */
  now?: () => number;
}

interface StoredEvent {
  seq: number;
  at: number;
  message: JSONRPCMessage;
}

interface StoredStream {
  events: StoredEvent[];
  /** Sequence number of the newest event dropped from this stream (0 = none). */
  droppedThrough: number;
  lastWrite: number;
}

export const DEFAULT_EVENT_LIMITS = { maxEventsPerStream: 200, maxStreams: 100, ttlMs: 5 * 60 * 1000 } as const;

/** `<stream id>.<sequence>`: the stream is recoverable from the id even after its events expired. */
function parseEventId(eventId: string): { streamId: string; seq: number } | undefined {
  const dot = eventId.lastIndexOf(".");
  const seq = Number(eventId.slice(dot + 1));
  if (dot <= 0 || !Number.isSafeInteger(seq) || seq <= 0) return undefined;
  return { streamId: eventId.slice(0, dot), seq };
}

const newestSeq = (stream: StoredStream): number => stream.events.at(-1)?.seq ?? stream.droppedThrough;

/** The empty `{}` the SDK stores for a priming event carries nothing to replay. */
const isPriming = (message: JSONRPCMessage): boolean => !("jsonrpc" in message);

export class MemoryEventStore implements EventStore {
  private readonly streams = new Map<StreamId, StoredStream>();
  private seq = 0;
  private readonly maxEvents: number;
  private readonly maxStreams: number;
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(limits: EventStoreLimits = {}) {
    this.maxEvents = limits.maxEventsPerStream ?? DEFAULT_EVENT_LIMITS.maxEventsPerStream;
    this.maxStreams = limits.maxStreams ?? DEFAULT_EVENT_LIMITS.maxStreams;
    this.ttlMs = limits.ttlMs ?? DEFAULT_EVENT_LIMITS.ttlMs;
    this.now = limits.now ?? Date.now;
  }

  /** Events held across all streams (tests, status). */
  get size(): number {
    let n = 0;
    for (const s of this.streams.values()) n += s.events.length;
    return n;
  }

  get streamCount(): number {
    return this.streams.size;
  }

  storeEvent(streamId: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const now = this.now();
    this.expire(now);
    let stream = this.streams.get(streamId);
    if (!stream) {
      this.makeRoomForStream();
      stream = { events: [], droppedThrough: 0, lastWrite: now };
      this.streams.set(streamId, stream);
    }
    const seq = ++this.seq;
    stream.events.push({ seq, at: now, message });
    stream.lastWrite = now;
    if (stream.events.length > this.maxEvents) this.dropOldest(stream, stream.events.length - this.maxEvents);
    return Promise.resolve(`${streamId}.${seq}`);
  }

  /** The stream of `eventId`, only when everything after it is still held (else the SDK answers 400). */
  getStreamIdForEventId(eventId: EventId): Promise<StreamId | undefined> {
    this.expire(this.now());
    return Promise.resolve(this.resumable(eventId)?.streamId);
  }

  async replayEventsAfter(lastEventId: EventId, { send }: { send: (eventId: EventId, message: JSONRPCMessage) => Promise<void> }): Promise<StreamId> {
    this.expire(this.now());
    const found = this.resumable(lastEventId);
    if (!found) throw new Error(`cannot resume after event ${lastEventId}: it is unknown or has expired`);
    for (const event of found.stream.events.filter((e) => e.seq > found.seq)) {
      if (!isPriming(event.message)) await send(`${found.streamId}.${event.seq}`, event.message);
    }
    return found.streamId;
  }

  private resumable(eventId: string): { streamId: string; seq: number; stream: StoredStream } | undefined {
    const parsed = parseEventId(eventId);
    const stream = parsed && this.streams.get(parsed.streamId);
    if (!parsed || !stream) return undefined;
    // Complete only if no event after `seq` was dropped, and `seq` was really issued to this stream.
    const known = parsed.seq === stream.droppedThrough || stream.events.some((e) => e.seq === parsed.seq);
    return known && parsed.seq >= stream.droppedThrough ? { ...parsed, stream } : undefined;
  }

  private dropOldest(stream: StoredStream, count: number): void {
    const dropped = stream.events.splice(0, count);
    const last = dropped.at(-1);
    if (last) stream.droppedThrough = last.seq;
  }

  private expire(now: number): void {
    for (const [id, stream] of this.streams) {
      const stale = stream.events.findIndex((e) => now - e.at <= this.ttlMs);
      this.dropOldest(stream, stale === -1 ? stream.events.length : stale);
      if (stream.events.length === 0 && now - stream.lastWrite > this.ttlMs) this.streams.delete(id);
    }
  }

  private makeRoomForStream(): void {
    while (this.streams.size >= this.maxStreams) {
      let oldest: [StreamId, StoredStream] | undefined;
      // By sequence, not time: writes within one millisecond still have an order.
      for (const entry of this.streams) if (!oldest || newestSeq(entry[1]) < newestSeq(oldest[1])) oldest = entry;
      if (!oldest) return;
      this.streams.delete(oldest[0]);
    }
  }
}
