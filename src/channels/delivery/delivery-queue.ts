/**
 * Reliable, idempotent outbound delivery shared by all channels. Each platform send is keyed by
 * a delivery key (`channel:deliveryId[#part]`); a key that was delivered, or is being delivered,
 * is never sent again, so a retried or resumed turn cannot produce a duplicate message.
 * Delivered keys live in a bounded in-memory LRU: a process restart forgets them.
 */
import { AbortedError, NanobotError } from "../../core/errors.js";
import { silentLogger } from "../../core/logger.js";
import type { Logger } from "../../core/logger.js";
import { LruSet } from "./lru-set.js";

/** How a channel judges a failed send. */
export interface RetryDecision {
  retryable: boolean;
  /** The platform asked us to wait this long (Telegram 429 `retry_after`). */
  retryAfterMs?: number;
}

export type ErrorClassifier = (error: unknown) => RetryDecision;

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Thrown when a send failed for good (not retryable, or out of attempts). */
export class DeliveryError extends NanobotError {
  override readonly code = "delivery_error";
  readonly key: string;
  readonly attempts: number;
  constructor(key: string, attempts: number, cause: unknown) {
    super(`delivery ${key} failed after ${attempts} attempt${attempts === 1 ? "" : "s"}`, { cause });
    this.key = key;
    this.attempts = attempts;
  }
}

export interface DeliveryQueueOptions {
  /** Waits before each retry; the length is the number of retries. Default 1 s, 2 s, 4 s. */
  retryDelaysMs?: readonly number[];
  /** A platform wait longer than this is not honoured: the send fails instead. Default 120 s. */
  maxRetryAfterMs?: number;
  /** Delivered keys remembered. Default 10,000. */
  capacity?: number;
  sleep?: Sleep;
  logger?: Logger;
}

export interface DeliveryOutcome<T> {
  /** False when the key had already been delivered (or was in flight): nothing was sent. */
  sent: boolean;
  value?: T;
}

export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1000, 2000, 4000];

export class DeliveryQueue {
  private readonly delays: readonly number[];
  private readonly maxRetryAfterMs: number;
  private readonly sleep: Sleep;
  private readonly logger: Logger;
  private readonly delivered: LruSet;
  private readonly inFlight = new Map<string, Promise<unknown>>();

  constructor(options: DeliveryQueueOptions = {}) {
    this.delays = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 120_000;
    this.sleep = options.sleep ?? defaultSleep;
    this.logger = options.logger ?? silentLogger;
    this.delivered = new LruSet(options.capacity ?? 10_000);
  }

  isDelivered(key: string): boolean {
    return this.delivered.has(key);
  }

  /** Records a key delivered by other means (e.g. a streamed reply finished by edits). */
  markDelivered(key: string): void {
    this.delivered.add(key);
  }

  /**
   * Sends once per key with retries. Resolves `{ sent: false }` for a duplicate key; rejects
   * with `DeliveryError` when the send fails for good (the key stays undelivered).
   */
  async deliver<T>(key: string, send: () => Promise<T>, classify: ErrorClassifier, signal?: AbortSignal): Promise<DeliveryOutcome<T>> {
    if (this.delivered.has(key)) return { sent: false };
    const running = this.inFlight.get(key);
    if (running) {
      await running.catch(() => undefined);
      return { sent: false };
    }
    const attempt = this.attempt(key, send, classify, signal);
    this.inFlight.set(key, attempt);
    try {
      const value = await attempt;
      this.delivered.add(key);
      return { sent: true, value };
    } finally {
      this.inFlight.delete(key);
    }
  }

  /** Retries without idempotency: for sends that carry no delivery id (typing, progress). */
  async withRetries<T>(key: string, send: () => Promise<T>, classify: ErrorClassifier, signal?: AbortSignal): Promise<T> {
    return this.attempt(key, send, classify, signal);
  }

  private async attempt<T>(key: string, send: () => Promise<T>, classify: ErrorClassifier, signal?: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw new AbortedError(`delivery ${key} aborted`);
      try {
        return await send();
      } catch (error) {
        const decision = classify(error);
        const delay = decision.retryAfterMs ?? this.delays[attempt];
        if (!decision.retryable || attempt >= this.delays.length || delay === undefined || delay > this.maxRetryAfterMs) {
          throw new DeliveryError(key, attempt + 1, error);
        }
        this.logger.warn("delivery failed, retrying", { key, attempt: attempt + 1, delayMs: delay });
        await this.sleep(delay, signal);
      }
    }
  }
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AbortedError("sleep aborted"));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortedError("sleep aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
