/**
 * The one HTTP path every adapter uses: POST a JSON body, map non-2xx answers to errors, and
 * yield the server-sent events as they arrive (parsed by `eventsource-parser`). The idle timer
 * aborts the request when the server goes quiet, so a stalled stream cannot hang a turn.
 */
import { EventSourceParserStream } from "eventsource-parser/stream";
import type { EventSourceMessage } from "eventsource-parser";
import { ProviderError } from "../core/errors.js";
import { mapHttpError, mapNetworkError, mapStreamError } from "./error-mapping.js";
import type { ErrorContext } from "./error-mapping.js";
import { DEFAULT_IDLE_TIMEOUT_MS } from "./types.js";
import type { ModelTarget } from "./types.js";

export interface SseRequest {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** Tells the error mappers whether content already reached the caller. */
export interface StreamProgress {
  streamed: boolean;
}

class StallSignal extends Error {}

/** Joins a base URL and a path without doubling or dropping slashes. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * POSTs `req` and yields its SSE messages. Throws `ProviderError` (HTTP, network, stall) or
 * `AbortedError` (caller's signal); the underlying request is cancelled in every case.
 */
export async function* streamSse(
  target: ModelTarget,
  req: SseRequest,
  signal: AbortSignal | undefined,
  progress: StreamProgress,
): AsyncGenerator<EventSourceMessage> {
  const ctx = () => ({ provider: target.provider, model: target.model, streamed: progress.streamed });
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  if (signal?.aborted) onAbort();
  signal?.addEventListener("abort", onAbort, { once: true });
  const fetchFn = target.fetch ?? fetch;
  try {
    let res: Response;
    try {
      res = await fetchFn(req.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream", ...req.headers },
        body: JSON.stringify(req.body),
        signal: controller.signal,
      });
    } catch (err) {
      throw mapNetworkError(err, signal, ctx());
    }
    if (!res.ok) {
      let text = "";
      try {
        text = await res.text();
      } catch (err) {
        throw mapNetworkError(err, signal, ctx());
      }
      throw mapHttpError(res.status, safeJson(text), res.headers, ctx());
    }
    if (!res.body) throw new ProviderError("response has no body", { kind: "invalid_response", ...ctx() });
    if (res.headers.get("content-type")?.includes("application/json")) throw await jsonInsteadOfStream(res, target, signal, ctx());
    const reader = res.body
      .pipeThrough(new TextDecoderStream())
      .pipeThrough(new EventSourceParserStream())
      .getReader();
    const idleMs = target.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    try {
      for (;;) {
        const next = await readWithIdleTimeout(reader, idleMs, controller);
        if (next.done) return;
        yield next.value;
      }
    } catch (err) {
      if (err instanceof StallSignal) {
        throw new ProviderError(`${target.provider} stream stalled: no data for ${Math.round(idleMs / 1000)}s`, {
          kind: "stream_stalled",
          ...ctx(),
        });
      }
      throw mapNetworkError(err, signal, ctx());
    } finally {
      reader.cancel().catch(() => undefined);
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    // Ends the HTTP request when the consumer stops early, fails, or the body is done.
    controller.abort();
  }
}

/**
 * Some gateways answer a streaming request with one JSON body: an error (mapped like an
 * in-stream error) or a non-streamed answer, which we do not accept silently.
 */
async function jsonInsteadOfStream(res: Response, target: ModelTarget, signal: AbortSignal | undefined, ctx: ErrorContext): Promise<Error> {
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    return mapNetworkError(err, signal, ctx);
  }
  const body = safeJson(text);
  if (body !== null && typeof body === "object" && "error" in body) return mapStreamError(body, ctx);
  return new ProviderError(`${target.provider} answered a streaming request with a plain JSON body`, { kind: "invalid_response", body, ...ctx });
}

/** One read, raced against the idle timer and the abort signal (some bodies only notice an abort on the next chunk). */
async function readWithIdleTimeout<T>(
  reader: ReadableStreamDefaultReader<T>,
  idleMs: number,
  controller: AbortController,
): ReturnType<ReadableStreamDefaultReader<T>["read"]> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const interrupted = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new StallSignal());
      controller.abort();
    }, idleMs);
    onAbort = () => reject(controller.signal.reason);
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([reader.read(), interrupted]);
  } finally {
    clearTimeout(timer);
    if (onAbort) controller.signal.removeEventListener("abort", onAbort);
  }
}

/** Parses one SSE `data:` payload; `undefined` for non-JSON lines (logged, then skipped). */
export function parseEventData(target: ModelTarget, message: EventSourceMessage): Record<string, unknown> | undefined {
  const value = safeJson(message.data);
  if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  target.log?.("warn", "skipping a malformed stream event", { provider: target.provider, data: message.data.slice(0, 200) });
  return undefined;
}
