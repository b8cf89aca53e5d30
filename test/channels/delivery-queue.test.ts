import { describe, expect, it } from "vitest";
import { DeliveryError, DeliveryQueue } from "../../src/channels/delivery/delivery-queue.js";
import type { RetryDecision } from "../../src/channels/delivery/delivery-queue.js";
import { recordingSleep } from "./helpers/harness.js";

class Flaky extends Error {
  constructor(readonly decision: RetryDecision) {
    super("flaky");
  }
}
const classify = (error: unknown): RetryDecision => (error instanceof Flaky ? error.decision : { retryable: false });

/** A send that fails with the given errors, then succeeds with its attempt number. */
function scripted(errors: Error[]): { send: () => Promise<number>; attempts: () => number } {
  let attempts = 0;
  return {
    attempts: () => attempts,
    send: () => {
      attempts++;
      const error = errors.shift();
      return error ? Promise.reject(error) : Promise.resolve(attempts);
    },
  };
}

describe("DeliveryQueue retries", () => {
  it("retries retryable failures after 1 s, 2 s, 4 s", async () => {
    const { sleep, waits } = recordingSleep();
    const queue = new DeliveryQueue({ sleep });
    const s = scripted([new Flaky({ retryable: true }), new Flaky({ retryable: true }), new Flaky({ retryable: true })]);
    expect(await queue.deliver("k", s.send, classify)).toEqual({ sent: true, value: 4 });
    expect(waits).toEqual([1000, 2000, 4000]);
  });

  it("gives up with DeliveryError after the last retry, leaving the key undelivered", async () => {
    const { sleep } = recordingSleep();
    const queue = new DeliveryQueue({ sleep });
    const s = scripted(Array.from({ length: 4 }, () => new Flaky({ retryable: true })));
    const error = await queue.deliver("k", s.send, classify).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).attempts).toBe(4);
    expect(queue.isDelivered("k")).toBe(false);
    expect(await queue.deliver("k", scripted([]).send, classify)).toEqual({ sent: true, value: 1 });
  });

  it("honours the platform's wait instead of the backoff", async () => {
    const { sleep, waits } = recordingSleep();
    const queue = new DeliveryQueue({ sleep });
    const s = scripted([new Flaky({ retryable: true, retryAfterMs: 30_000 })]);
    await queue.deliver("k", s.send, classify);
    expect(waits).toEqual([30_000]);
  });

  it("fails at once on a non-retryable error or an unreasonable wait", async () => {
    const { sleep, waits } = recordingSleep();
    const queue = new DeliveryQueue({ sleep, maxRetryAfterMs: 60_000 });
    await expect(queue.deliver("a", scripted([new Flaky({ retryable: false })]).send, classify)).rejects.toThrow(DeliveryError);
    await expect(queue.deliver("b", scripted([new Flaky({ retryable: true, retryAfterMs: 3_600_000 })]).send, classify)).rejects.toThrow(/1 attempt$/);
    expect(waits).toEqual([]);
  });
});

describe("DeliveryQueue idempotency", () => {
  it("sends a key once, including concurrent duplicates", async () => {
    const queue = new DeliveryQueue();
    const s = scripted([]);
    const results = await Promise.all([queue.deliver("k", s.send, classify), queue.deliver("k", s.send, classify)]);
    expect(results.map((r) => r.sent).sort()).toEqual([false, true]);
    expect(await queue.deliver("k", s.send, classify)).toEqual({ sent: false });
    expect(s.attempts()).toBe(1);
  });

  it("forgets the oldest keys beyond its capacity (in-memory LRU)", async () => {
    const queue = new DeliveryQueue({ capacity: 2 });
    for (const key of ["a", "b", "c"]) await queue.deliver(key, scripted([]).send, classify);
    expect(queue.isDelivered("a")).toBe(false);
    expect(queue.isDelivered("b")).toBe(true);
    expect(queue.isDelivered("c")).toBe(true);
  });
});
