/**
 * One holder per key at a time, in arrival order: `acquire(key)` resolves once every earlier
 * holder of the same key has released, with the release function; different keys never wait
 * for each other. A waiter whose signal aborts rejects with `AbortedError` and holds nothing
 * (the ones behind it still wait for the holders before it). `run(key, fn)` is the same around
 * one call. Used for a session's turns in one process (DirectTurnProcessor), the PostgreSQL
 * lease waiters of one process, and a chat's events in order (NapCat).
 */
import { AbortedError } from "./errors.js";

export class KeyedSerial {
  private readonly tails = new Map<string, Promise<void>>();

  constructor(private readonly abortMessage = "stopped while waiting its turn") {}

  async acquire(key: string, signal?: AbortSignal): Promise<() => void> {
    const before = this.tails.get(key) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    // The next waiter waits for this one and, through it, for every earlier one.
    const tail = before.then(() => mine);
    this.tails.set(key, tail);
    const release = (): void => {
      done();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
    try {
      await abortable(before, signal, this.abortMessage);
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  async run<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(key, signal);
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

function abortable(promise: Promise<void>, signal: AbortSignal | undefined, message: string): Promise<void> {
  if (!signal) return promise;
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(new AbortedError(message));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
