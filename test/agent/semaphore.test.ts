import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { Semaphore } from "../../src/agent/semaphore.js";
import { AbortedError } from "../../src/core/errors.js";

describe("Semaphore", () => {
  it("serves waiters in arrival order, handing each released slot straight on", async () => {
    const gate = new Semaphore(1);
    const order: string[] = [];
    const first = await gate.acquire();
    const second = gate.acquire().then((release) => (order.push("second"), release));
    const third = gate.acquire().then((release) => (order.push("third"), release));
    expect(gate.waiting).toBe(2);
    first();
    (await second)();
    (await third)();
    expect(order).toEqual(["second", "third"]);
    expect(gate.inUse).toBe(0);
  });

  it("drops a waiter whose signal aborts, and the slot goes to the one behind it", async () => {
    const gate = new Semaphore(1);
    const held = await gate.acquire();
    const stop = new AbortController();
    const cancelled = gate.acquire(stop.signal);
    const next = gate.acquire();
    stop.abort();
    await expect(cancelled).rejects.toBeInstanceOf(AbortedError);
    expect(gate.waiting).toBe(1);
    held();
    (await next)();
    expect(gate.inUse).toBe(0);
  });

  it("leaves no abort listener on a long-lived signal once a wait is granted", async () => {
    const gate = new Semaphore(1);
    const life = new AbortController();
    for (let i = 0; i < 20; i++) {
      const held = await gate.acquire();
      const waiting = gate.acquire(life.signal);
      expect(getEventListeners(life.signal, "abort")).toHaveLength(1);
      held();
      (await waiting)();
    }
    expect(getEventListeners(life.signal, "abort")).toHaveLength(0);
    expect(gate.inUse).toBe(0);
  });
});
