import { describe, expect, it } from "vitest";
import { AbortedError } from "../../src/core/errors.js";
import { InProcessBus } from "../../src/bus/index.js";
import type { BusError, InboundMessage, OutboundMessage } from "../../src/bus/index.js";

const inbound = (id: string, content = id): InboundMessage => ({
  id,
  channel: "test",
  chatId: "c1",
  senderId: "u1",
  content,
  receivedAt: 0,
});
const out = (id: string, channel = "test"): OutboundMessage => ({ kind: "message", id, channel, chatId: "c1", content: id });

describe("inbound queue", () => {
  it("delivers in FIFO order, to waiting consumers too", async () => {
    const bus = new InProcessBus();
    await bus.publishInbound(inbound("a"));
    await bus.publishInbound(inbound("b"));
    expect(bus.inboundSize()).toBe(2);
    expect((await bus.consumeInbound()).id).toBe("a");
    expect((await bus.consumeInbound()).id).toBe("b");
    const waiting = bus.consumeInbound();
    await bus.publishInbound(inbound("c"));
    expect((await waiting).id).toBe("c");
    expect(bus.inboundSize()).toBe(0);
  });

  it("an aborted consumer rejects with AbortedError and does not swallow the next message", async () => {
    const bus = new InProcessBus();
    const ac = new AbortController();
    const first = bus.consumeInbound(ac.signal);
    ac.abort();
    await expect(first).rejects.toBeInstanceOf(AbortedError);
    await bus.publishInbound(inbound("x"));
    expect((await bus.consumeInbound()).id).toBe("x");
  });
});

describe("outbound fan-out", () => {
  it("delivers to matching subscribers only, and stops after unsubscribe", async () => {
    const bus = new InProcessBus();
    const all: string[] = [];
    const tg: string[] = [];
    const offAll = bus.subscribeOutbound((m) => void all.push(m.kind === "message" ? m.id : m.kind));
    bus.subscribeOutbound((m) => void tg.push(m.kind === "message" ? m.id : m.kind), { channel: "telegram" });
    await bus.publishOutbound(out("1"));
    await bus.publishOutbound(out("2", "telegram"));
    offAll();
    await bus.publishOutbound(out("3", "telegram"));
    expect(all).toEqual(["1", "2"]);
    expect(tg).toEqual(["2", "3"]);
  });

  it("filters by kind", async () => {
    const bus = new InProcessBus();
    const seen: string[] = [];
    bus.subscribeOutbound((m) => void seen.push(m.kind), { kinds: ["delta", "stream_end"] });
    await bus.publishOutbound(out("1"));
    await bus.publishOutbound({ kind: "delta", channel: "test", chatId: "c", streamId: "s", delta: "x" });
    expect(seen).toEqual(["delta"]);
  });

  it("a failing handler becomes a typed error event and the others still receive the message", async () => {
    const bus = new InProcessBus();
    const errors: BusError[] = [];
    bus.onError((e) => errors.push(e));
    const got: string[] = [];
    bus.subscribeOutbound(() => {
      throw new Error("sync boom");
    });
    bus.subscribeOutbound(async () => {
      await Promise.resolve();
      throw new Error("async boom");
    });
    bus.subscribeOutbound((m) => void got.push(m.kind));
    await bus.publishOutbound(out("1"));
    expect(got).toEqual(["message"]);
    expect(errors.map((e) => [e.type, (e.error as Error).message])).toEqual([
      ["outbound_handler_error", "sync boom"],
      ["outbound_handler_error", "async boom"],
    ]);
    expect(errors[0]?.channel).toBe("test");
  });
});
