/**
 * Error shapes and deadlines shared by the IMAP and SMTP sides. Every network step runs under a
 * deadline so a server that accepts the connection and then goes silent cannot stall a poll or
 * a delivery forever; a missed deadline is retryable, like any connection trouble.
 */
import { AbortedError } from "../../core/errors.js";

/** An error the channel's retry classifier (`isRetryableMailError`) understands. */
export class MailTransportError extends Error {
  readonly retryable: boolean;
  readonly code: string | undefined;
  constructor(message: string, options: { retryable: boolean; code?: string; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "MailTransportError";
    this.retryable = options.retryable;
    this.code = options.code;
  }
}

/**
 * Settles with `work`, or rejects after `ms` (and on `signal`), calling `onGiveUp` first so the
 * caller can tear down the connection the stuck operation holds.
 */
export function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  what: string,
  options: { onGiveUp?: () => void; signal?: AbortSignal | undefined } = {},
): Promise<T> {
  const { onGiveUp, signal } = options;
  if (signal?.aborted) {
    onGiveUp?.();
    work.catch(() => undefined);
    return Promise.reject(new AbortedError(`${what} aborted`));
  }
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      fn();
    };
    const giveUp = (error: Error): void => {
      finish(() => {
        onGiveUp?.();
        reject(error);
      });
    };
    const timer = setTimeout(() => {
      giveUp(new MailTransportError(`${what} timed out after ${ms} ms`, { retryable: true, code: "ETIMEDOUT" }));
    }, ms);
    const onAbort = (): void => giveUp(new AbortedError(`${what} aborted`));
    signal?.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(error instanceof Error ? error : new Error(String(error)))),
    );
  });
}
