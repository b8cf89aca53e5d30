/** Time seams for the decorators, so tests can assert exact waits without waiting. */
import { AbortedError } from "../core/errors.js";

/** Waits `ms`, or rejects with `AbortedError` as soon as `signal` aborts. */
export type SleepFunction = (ms: number, signal?: AbortSignal) => Promise<void>;

export const realSleep: SleepFunction = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortedError(undefined, { cause: signal.reason }));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AbortedError(undefined, { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });

export type Clock = () => number;
export const realClock: Clock = () => Date.now();
