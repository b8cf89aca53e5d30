/**
 * The `/mcp` event store: replay after Last-Event-ID, and the three bounds (events per stream,
 * streams, age) that keep it from growing without limit. A resume from an event that was
 * dropped is refused rather than replayed with a hole in it.
 */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { MemoryEventStore } from "../../src/gateway/mcp/event-store.js";

const note = (n: number): JSONRPCMessage => ({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `m${n}` } });

async function replay(store: MemoryEventStore, after: string): Promise<{ stream: string; events: [string, JSONRPCMessage][] }> {
  const events: [string, JSONRPCMessage][] = [];
  const stream = await store.replayEventsAfter(after, {
    send: (id, message) => {
      events.push([id, message]);
      return Promise.resolve();
    },
  });
  return { stream, events };
}

const dataOf = (events: [string, JSONRPCMessage][]): unknown[] => events.map(([, m]) => (m as { params?: { data?: unknown } }).params?.data);

describe("replay after Last-Event-ID", () => {
  it("sends the events of that stream after the given one, in order, with their ids", async () => {
    const store = new MemoryEventStore();
    const a1 = await store.storeEvent("A", note(1));
    await store.storeEvent("B", note(100));
    const a2 = await store.storeEvent("A", note(2));
    const a3 = await store.storeEvent("A", note(3));
    expect(await store.getStreamIdForEventId(a1)).toBe("A");
    const { stream, events } = await replay(store, a1);
    expect(stream).toBe("A");
    expect(events.map(([id]) => id)).toEqual([a2, a3]);
    expect(dataOf(events)).toEqual(["m2", "m3"]);
    expect((await replay(store, a3)).events).toEqual([]);
  });

  it("skips the empty priming event the transport stores first", async () => {
    const store = new MemoryEventStore();
    const priming = await store.storeEvent("A", {} as JSONRPCMessage);
    await store.storeEvent("A", note(1));
    expect(dataOf((await replay(store, priming)).events)).toEqual(["m1"]);
  });

  it("refuses ids it never issued", async () => {
    const store = new MemoryEventStore();
    const a1 = await store.storeEvent("A", note(1));
    for (const bad of ["nonsense", "A.999", "Z.1", `${a1}x`, "A.0"]) {
      expect(await store.getStreamIdForEventId(bad), bad).toBeUndefined();
      await expect(replay(store, bad)).rejects.toThrow(/unknown or has expired/);
    }
  });
});

describe("bounds", () => {
  it("keeps only the newest events of a stream; resuming before the dropped ones is refused", async () => {
    const store = new MemoryEventStore({ maxEventsPerStream: 3 });
    const ids: string[] = [];
    for (let i = 1; i <= 5; i++) ids.push(await store.storeEvent("A", note(i)));
    expect(store.size).toBe(3);
    // m1 and m2 are gone: resuming after m1 would silently miss m2.
    expect(await store.getStreamIdForEventId(ids[0]!)).toBeUndefined();
    // After m2 (the newest dropped one) nothing is missing: m3..m5 are all held.
    expect(dataOf((await replay(store, ids[1]!)).events)).toEqual(["m3", "m4", "m5"]);
  });

  it("keeps at most maxStreams streams, dropping the least recently written", async () => {
    const store = new MemoryEventStore({ maxStreams: 2 });
    const a = await store.storeEvent("A", note(1));
    const b = await store.storeEvent("B", note(2));
    await store.storeEvent("A", note(3));
    await store.storeEvent("C", note(4));
    expect(store.streamCount).toBe(2);
    expect(await store.getStreamIdForEventId(b)).toBeUndefined();
    expect(await store.getStreamIdForEventId(a)).toBe("A");
  });

  it("drops events older than the TTL, and then the stream itself", async () => {
    let now = 1_000;
    const store = new MemoryEventStore({ ttlMs: 100, now: () => now });
    const old = await store.storeEvent("A", note(1));
    now += 60;
    const fresh = await store.storeEvent("A", note(2));
    now += 60; // the first event is 120 ms old, the second 60 ms
    expect(await store.getStreamIdForEventId(old)).toBe("A");
    expect(dataOf((await replay(store, old)).events)).toEqual(["m2"]);
    now += 30; // the second is 90 ms old: still held
    await store.storeEvent("B", note(3));
    expect(store.size).toBe(2);
    expect(await store.getStreamIdForEventId(fresh)).toBe("A");
    now += 200;
    await store.storeEvent("C", note(4));
    expect(store.streamCount).toBe(1);
    expect(await store.getStreamIdForEventId(fresh)).toBeUndefined();
  });
});
