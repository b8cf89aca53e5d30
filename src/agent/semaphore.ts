/**
 * A counting semaphore: the AgentLoop's global concurrency gate (how many turns run at once
 * across sessions) and the sub-agent limit. Waiters are served in arrival order.
 */
import { AbortedError } from "../core/errors.js";

export class Semaphore {
  private active = 0;
  private readonly waiters: Array<{ grant: () => void; reject: (err: unknown) => void }> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`semaphore limit must be a positive integer, got ${limit}`);
  }

  /** Slots in use right now. */
  get inUse(): number {
    return this.active;
  }

  /** Callers waiting for a slot. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Waits for a slot; the returned function releases it (calling it twice is harmless). */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw new AbortedError("cancelled while waiting for a slot");
    if (this.active < this.limit) {
      this.active++;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) {
          this.waiters.splice(i, 1);
          reject(new AbortedError("cancelled while waiting for a slot"));
        }
      };
      // Granted, the waiter stops listening: a long-lived signal would otherwise collect one
      // listener per wait.
      const waiter = {
        grant: (): void => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        reject,
      };
      this.waiters.push(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    return this.releaser();
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      // The slot passes straight to the next waiter, so `active` stays the same.
      if (next) next.grant();
      else this.active--;
    };
  }
}

/** `NANOBOT_MAX_CONCURRENT_REQUESTS`, else 3; invalid values fall back to the default. */
export function maxConcurrentFromEnv(env: Record<string, string | undefined>, fallback = 3): number {
  const raw = env.NANOBOT_MAX_CONCURRENT_REQUESTS;
  const n = raw === undefined ? NaN : Number(raw);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}
