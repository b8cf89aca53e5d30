/**
 * Fallback models: when a model fails for a reason another model may not share (outage, rate
 * limit, overload, auth), the next one is tried. A circuit breaker skips a model that failed
 * several times in a row, so a dead primary does not cost a timeout on every turn.
 */
import { EventStream } from "../core/event-stream.js";
import { ProviderError, errorMessage } from "../core/errors.js";
import type { ProviderErrorKind } from "../core/errors.js";
import type { LanguageModel, LLMRequest, ModelEvent, ModelResponse, ModelStream } from "../core/llm.js";
import { modelErrorEvent } from "../core/llm.js";
import { forwardEvents } from "./forward.js";
import { realClock } from "./timing.js";
import type { Clock } from "./timing.js";

export interface FallbackOptions {
  /** Consecutive failures that open a model's circuit (default 3). */
  failureThreshold?: number;
  /** How long an open circuit skips the model (default 60 s). */
  cooldownMs?: number;
  now?: Clock;
}

/** Failures that say nothing about the request itself, so another model may succeed. */
const FALLBACK_KINDS: ReadonlySet<ProviderErrorKind> = new Set([
  "timeout",
  "connection",
  "server",
  "rate_limit",
  "overloaded",
  "auth",
  "quota",
  "stream_stalled",
]);

export function shouldFallBack(err: unknown): boolean {
  return err instanceof ProviderError && FALLBACK_KINDS.has(err.kind) && !err.streamed;
}

interface Breaker {
  failures: number;
  openUntil: number;
}

const label = (m: LanguageModel) => `${m.provider}/${m.model}`;

export function withFallback(models: readonly LanguageModel[], options: FallbackOptions = {}): LanguageModel {
  const primary = models[0];
  if (!primary) throw new Error("withFallback needs at least one model");
  if (models.length === 1) return primary;
  const threshold = options.failureThreshold ?? 3;
  const cooldown = options.cooldownMs ?? 60_000;
  const now = options.now ?? realClock;
  const breakers = models.map((): Breaker => ({ failures: 0, openUntil: 0 }));

  const stream = (request: LLMRequest, signal?: AbortSignal): ModelStream =>
    EventStream.run<ModelEvent, ModelResponse>(modelErrorEvent, async (out) => {
      const open = breakers.map((b) => b.openUntil > now());
      // With every circuit open, trying them all beats failing without a request.
      const order = models.map((_, i) => i).filter((i) => !open[i] || open.every(Boolean));
      const first = order[0];
      if (first !== undefined && first > 0) {
        const to = models[first] as LanguageModel;
        out.push({ type: "fallback", from: label(primary), to: label(to), error: `circuit open for ${label(primary)}` });
      }
      for (let n = 0; n < order.length; n++) {
        const index = order[n] as number;
        const model = models[index] as LanguageModel;
        const breaker = breakers[index] as Breaker;
        const inner = model.stream(request, signal);
        const { streamed } = await forwardEvents(inner, out);
        try {
          const response = await inner.result();
          breaker.failures = 0;
          breaker.openUntil = 0;
          return response;
        } catch (err) {
          const next = order[n + 1];
          if (!shouldFallBack(err) || streamed) throw err;
          breaker.failures++;
          if (breaker.failures >= threshold) breaker.openUntil = now() + cooldown;
          if (next === undefined) throw err;
          out.push({ type: "fallback", from: label(model), to: label(models[next] as LanguageModel), error: errorMessage(err) });
        }
      }
      throw new Error("unreachable: fallback order was empty");
    });

  return { provider: primary.provider, model: primary.model, contextWindow: primary.contextWindow, stream };
}
