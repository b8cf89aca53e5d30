/**
 * A `LanguageModel` decorator that retries transient failures. Errors after content reached
 * the caller are final (a retry would duplicate output), except a stalled stream, which would
 * otherwise hang the turn. Each attempt also gets a wall-clock limit.
 */
import { EventStream } from "../core/event-stream.js";
import { AbortedError, ProviderError, errorMessage } from "../core/errors.js";
import { onAbort } from "../core/on-abort.js";
import type { LanguageModel, LLMRequest, ModelEvent, ModelResponse, ModelStream } from "../core/llm.js";
import { modelErrorEvent } from "../core/llm.js";
import { forwardEvents } from "./forward.js";
import { realSleep } from "./timing.js";
import type { SleepFunction } from "./timing.js";
import type { LogFunction } from "./types.js";

export type RetryMode = "standard" | "persistent";

export interface RetryOptions {
  /** `standard`: waits 1, 2, 4 s (4 attempts). `persistent`: doubling up to 60 s until 10 identical errors. */
  mode?: RetryMode;
  /**
   * Limit for one attempt, headers to last byte (default 300 s; 0 = none). The Python nanobot's
   * `llmTimeoutS` / `NANOBOT_LLM_TIMEOUT_S` (see llm-timeout.ts). A timed-out attempt is retried.
   */
  wallTimeoutMs?: number;
  /**
   * The limit once the answer is streaming (default: `wallTimeoutMs`). Python allows a streaming
   * answer max(300 s, 2 × the LLM timeout): a long answer arriving steadily is not cut, while a
   * stalled one is ended by the stream-idle limit.
   */
  streamingWallTimeoutMs?: number;
  /** Upper bound for any single wait, including server-requested ones (default 60 s). */
  maxDelayMs?: number;
  sleep?: SleepFunction;
  log?: LogFunction;
}

export const STANDARD_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000];
export const PERSISTENT_MAX_DELAY_MS = 60_000;
export const PERSISTENT_IDENTICAL_LIMIT = 10;
export const DEFAULT_WALL_TIMEOUT_MS = 300_000;

/** `1.5s`, `300s`: the configured limit as the user wrote it (seconds, no rounding to 0). */
function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}s`;
}

function errorKey(err: ProviderError): string {
  return `${err.kind}|${err.status ?? ""}|${err.message}`;
}

/** The wait before attempt `attempt + 1`, or undefined when the schedule is exhausted. */
function backoff(mode: RetryMode, attempt: number): number | undefined {
  if (mode === "persistent") return Math.min(1_000 * 2 ** (attempt - 1), PERSISTENT_MAX_DELAY_MS);
  return STANDARD_DELAYS_MS[attempt - 1];
}

export function withRetry(model: LanguageModel, options: RetryOptions = {}): LanguageModel {
  const mode = options.mode ?? "standard";
  const sleep = options.sleep ?? realSleep;
  const wallMs = options.wallTimeoutMs ?? DEFAULT_WALL_TIMEOUT_MS;
  const maxDelay = options.maxDelayMs ?? PERSISTENT_MAX_DELAY_MS;
  const streamingWallMs = options.streamingWallTimeoutMs ?? wallMs;

  /** Runs one attempt, forwarding its events; resolves or rejects with the attempt's outcome. */
  async function attemptOnce(
    out: EventStream<ModelEvent, ModelResponse>,
    request: LLMRequest,
    signal: AbortSignal | undefined,
    state: { streamed: boolean; started: boolean },
  ): Promise<ModelResponse> {
    const controller = new AbortController();
    const stopWatching = onAbort(signal, () => controller.abort(signal?.reason));
    let timedOut = false;
    const begun = Date.now();
    let limitMs = wallMs;
    // One timer per attempt: once the answer is streaming the (longer) streaming limit counts,
    // from the start, and the timer checks which limit applies when it fires rather than being
    // re-armed by the first delta of every answer.
    const expire = (): void => {
      const remaining = limitMs - (Date.now() - begun);
      if (remaining > 0) {
        timer = setTimeout(expire, remaining);
        return;
      }
      timedOut = true;
      controller.abort();
    };
    let timer = wallMs > 0 ? setTimeout(expire, wallMs) : undefined;
    const onContent = (): void => {
      state.streamed = true;
      if (streamingWallMs > limitMs) limitMs = streamingWallMs;
    };
    try {
      const inner = model.stream(request, controller.signal);
      // Only the first attempt's `start` reaches the caller.
      const skipRepeatedStart = (e: ModelEvent): boolean => {
        if (e.type !== "start") return false;
        if (state.started) return true;
        state.started = true;
        return false;
      };
      await forwardEvents(inner, out, skipRepeatedStart, onContent);
      return await inner.result();
    } catch (err) {
      if (timedOut && !signal?.aborted) {
        throw new ProviderError(`${model.provider}/${model.model}: no complete answer within ${formatSeconds(limitMs)} (the LLM timeout: llmTimeoutS / NANOBOT_LLM_TIMEOUT_S)`, {
          kind: "timeout",
          provider: model.provider,
          model: model.model,
          streamed: state.streamed,
          cause: err,
        });
      }
      throw err;
    } finally {
      clearTimeout(timer);
      stopWatching();
    }
  }

  const stream = (request: LLMRequest, signal?: AbortSignal): ModelStream =>
    EventStream.run<ModelEvent, ModelResponse>(modelErrorEvent, async (out) => {
      const state = { streamed: false, started: false };
      let lastKey: string | undefined;
      let identical = 0;
      for (let attempt = 1; ; attempt++) {
        try {
          return await attemptOnce(out, request, signal, state);
        } catch (err) {
          if (signal?.aborted || err instanceof AbortedError) throw err instanceof AbortedError ? err : new AbortedError(undefined, { cause: err });
          if (!(err instanceof ProviderError) || !err.retryable) throw err;
          if (state.streamed && err.kind !== "stream_stalled") throw err;
          const key = errorKey(err);
          identical = key === lastKey ? identical + 1 : 1;
          lastKey = key;
          if (mode === "persistent" && identical >= PERSISTENT_IDENTICAL_LIMIT) throw err;
          const scheduled = backoff(mode, attempt);
          if (scheduled === undefined) throw err;
          const delayMs = Math.min(err.retryAfterSeconds !== undefined ? Math.ceil(err.retryAfterSeconds * 1000) : scheduled, maxDelay);
          options.log?.("warn", "provider call failed, retrying", { attempt, delayMs, error: err.message });
          out.push({ type: "retry_wait", attempt, delayMs, error: errorMessage(err) });
          await sleep(delayMs, signal);
          state.streamed = false;
        }
      }
    });

  return { provider: model.provider, model: model.model, contextWindow: model.contextWindow, stream };
}
