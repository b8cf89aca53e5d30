import { describe, expect, it } from "vitest";
import { EventStream } from "../../src/core/event-stream.js";

type Ev = { type: "n"; n: number } | { type: "error"; error: unknown };
const toError = (error: unknown): Ev => ({ type: "error", error });

async function collect<E>(stream: AsyncIterable<E>): Promise<E[]> {
  const out: E[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe("EventStream", () => {
  it("delivers pushed events in order and resolves result() with the end value", async () => {
    const s = new EventStream<Ev, string>(toError);
    s.push({ type: "n", n: 1 });
    s.push({ type: "n", n: 2 });
    s.end("done");
    expect(await collect(s)).toEqual([
      { type: "n", n: 1 },
      { type: "n", n: 2 },
    ]);
    await expect(s.result()).resolves.toBe("done");
  });

  it("wakes a waiting consumer for events pushed later", async () => {
    const s = new EventStream<Ev, number>(toError);
    const seen = collect(s);
    setTimeout(() => {
      s.push({ type: "n", n: 7 });
      s.end(1);
    }, 5);
    expect(await seen).toEqual([{ type: "n", n: 7 }]);
  });

  it("ends with an error event and rejects result() when the producer throws", async () => {
    const boom = new Error("boom");
    const s = EventStream.run<Ev, number>(toError, async (stream) => {
      stream.push({ type: "n", n: 1 });
      throw boom;
    });
    const events = await collect(s);
    expect(events).toEqual([{ type: "n", n: 1 }, { type: "error", error: boom }]);
    await expect(s.result()).rejects.toBe(boom);
  });

  it("result() can be awaited without iterating (drained use)", async () => {
    const s = EventStream.run<Ev, number>(toError, async (stream) => {
      for (let i = 0; i < 3; i++) stream.push({ type: "n", n: i });
      return 42;
    });
    await expect(s.result()).resolves.toBe(42);
  });

  it("ignores pushes after the end and a second end", async () => {
    const s = new EventStream<Ev, number>(toError);
    s.end(1);
    s.push({ type: "n", n: 9 });
    s.end(2);
    expect(await collect(s)).toEqual([]);
    await expect(s.result()).resolves.toBe(1);
  });

  it("subscribers observe events as pushed and can unsubscribe; a throwing subscriber is isolated", async () => {
    const s = new EventStream<Ev, number>(toError);
    const seen: number[] = [];
    const off = s.subscribe((e) => {
      if (e.type === "n") seen.push(e.n);
    });
    s.subscribe(() => {
      throw new Error("bad observer");
    });
    s.push({ type: "n", n: 1 });
    off();
    s.push({ type: "n", n: 2 });
    s.end(0);
    expect(seen).toEqual([1]);
    expect((await collect(s)).length).toBe(2);
  });

  it("a consumer that only iterates does not cause an unhandled rejection", async () => {
    const s = EventStream.run<Ev, number>(toError, async () => {
      throw new Error("x");
    });
    const events = await collect(s);
    expect(events[0]?.type).toBe("error");
  });

  describe("pipe", () => {
    it("hands queued events first, then each pushed one as it is pushed, and resolves at the end", async () => {
      const s = new EventStream<Ev, string>(toError);
      s.push({ type: "n", n: 1 });
      const seen: number[] = [];
      const piped = s.pipe((e) => seen.push(e.type === "n" ? e.n : -1));
      expect(seen).toEqual([1]);
      s.push({ type: "n", n: 2 });
      // Synchronously: no promise or microtask between the push and the consumer.
      expect(seen).toEqual([1, 2]);
      s.end("done");
      await piped;
      await expect(s.result()).resolves.toBe("done");
      // Nothing was buffered for an iterator.
      expect(await collect(s)).toEqual([]);
    });

    it("resolves when the producer fails, after handing over the error event", async () => {
      const boom = new Error("boom");
      const s = EventStream.run<Ev, number>(toError, async (stream) => {
        stream.push({ type: "n", n: 1 });
        throw boom;
      });
      const seen: Ev[] = [];
      await s.pipe((e) => seen.push(e));
      expect(seen).toEqual([{ type: "n", n: 1 }, { type: "error", error: boom }]);
      await expect(s.result()).rejects.toBe(boom);
    });

    it("rejects with what the consumer threw and drops the events after it; the producer goes on", async () => {
      const s = new EventStream<Ev, string>(toError);
      const seen: number[] = [];
      const piped = s.pipe((e) => {
        if (e.type === "n" && e.n === 2) throw new Error("consumer broke");
        if (e.type === "n") seen.push(e.n);
      });
      s.push({ type: "n", n: 1 });
      s.push({ type: "n", n: 2 });
      s.push({ type: "n", n: 3 });
      await expect(piped).rejects.toThrow("consumer broke");
      s.end("done");
      expect(seen).toEqual([1]);
      await expect(s.result()).resolves.toBe("done");
    });
  });
});
