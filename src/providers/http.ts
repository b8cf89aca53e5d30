/**
 * The one HTTP path every adapter uses: POST a JSON body, map non-2xx answers to errors, and
 * yield the server-sent events as they arrive (parsed by `eventsource-parser`). The idle timer
 * aborts the request when the server goes quiet, so a stalled stream cannot hang a turn.
 */
import type { EventSourceMessage } from "eventsource-parser";
import { ProviderError } from "../core/errors.js";
import { annotateActiveSpan, tracingEnabled } from "../core/tracing/tracer.js";
import { mapHttpError, mapNetworkError, mapStreamError } from "./error-mapping.js";
import type { ErrorContext } from "./error-mapping.js";
import { encodeJsonBody } from "./json-body.js";
import { StallSignal, openWithFetch, openWithNodeHttp } from "./sse-source.js";
import type { SseSource } from "./sse-source.js";
import { DEFAULT_IDLE_TIMEOUT_MS } from "./types.js";
import type { ModelTarget } from "./types.js";

export interface SseRequest {
  url: string;
  headers: Record<string, string>;
  /** Serialised by `encodeJsonBody` (a `JsonList` inside is sent from cached bytes). */
  body: Record<string, unknown>;
}

/** Tells the error mappers whether content already reached the caller. */
export interface StreamProgress {
  streamed: boolean;
}

/** Joins a base URL and a path without doubling or dropping slashes. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}

/** `server.address` / `server.port` of the model call's span (see engine/loop/model-span.ts). */
function serverAttributes(url: string): Record<string, string | number | undefined> {
  if (!tracingEnabled()) return {};
  try {
    const parsed = new URL(url);
    return { "server.address": parsed.hostname, "server.port": parsed.port ? Number(parsed.port) : parsed.protocol === "https:" ? 443 : 80 };
  } catch {
    return {};
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/**
 * POSTs `req` and hands its SSE messages to `onMessage` in order, until the body ends or
 * `onMessage` returns false. Rejects with `ProviderError` (HTTP, network, stall) or
 * `AbortedError` (caller's signal); an error `onMessage` throws comes out as it was thrown. The
 * underlying request is ended in every case. A callback rather than an async generator: the
 * messages reach it as the socket's chunks are parsed, with no promise per message, and there
 * is less code for V8 to compile once it is hot.
 */
export async function readSse(
  target: ModelTarget,
  req: SseRequest,
  signal: AbortSignal | undefined,
  progress: StreamProgress,
  onMessage: (message: EventSourceMessage) => boolean | void,
): Promise<void> {
  const source = await openSse(target, req, signal, progress);
  // What `onMessage` threw comes out as it was; the source's own failures are mapped.
  let thrown: { error: unknown } | undefined;
  try {
    await source.each((message) => {
      try {
        return onMessage(message);
      } catch (error) {
        thrown = { error };
        return false;
      }
    });
  } catch (err) {
    throw readFailure(err, target, signal, progress);
  } finally {
    source.close();
  }
  if (thrown) throw thrown.error;
}

function errorContext(target: ModelTarget, progress: StreamProgress): ErrorContext {
  return { provider: target.provider, model: target.model, streamed: progress.streamed };
}

/** What a failed read of the body becomes: a stall names the idle limit, the rest as network errors. */
function readFailure(err: unknown, target: ModelTarget, signal: AbortSignal | undefined, progress: StreamProgress): Error {
  if (err instanceof StallSignal) {
    const idleMs = target.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    return new ProviderError(`${target.provider} stream stalled: no data for ${Math.round(idleMs / 1000)}s`, {
      kind: "stream_stalled",
      ...errorContext(target, progress),
    });
  }
  return mapNetworkError(err, signal, errorContext(target, progress));
}

/** Opens the request and checks it answered with a stream; the source is closed when it did not. */
async function openSse(target: ModelTarget, req: SseRequest, signal: AbortSignal | undefined, progress: StreamProgress): Promise<SseSource> {
  const init = {
    url: withQuery(req.url, target.extraQuery),
    headers: { "content-type": "application/json", accept: "text/event-stream", ...req.headers },
    body: encodeJsonBody(target.extraBody ? { ...req.body, ...target.extraBody } : req.body),
    idleMs: target.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    signal,
  };
  annotateActiveSpan(serverAttributes(init.url));
  let source: SseSource;
  try {
    source = target.fetch ? await openWithFetch(target.fetch, init) : await openWithNodeHttp(init);
  } catch (err) {
    throw mapNetworkError(err, signal, errorContext(target, progress));
  }
  try {
    if (source.status < 200 || source.status > 299) {
      const text = await readText(source, signal, errorContext(target, progress));
      throw mapHttpError(source.status, safeJson(text), source.headers, errorContext(target, progress));
    }
    if (source.headers.get("content-type")?.includes("application/json")) {
      throw jsonInsteadOfStream(await readText(source, signal, errorContext(target, progress)), target, errorContext(target, progress));
    }
    return source;
  } catch (err) {
    source.close();
    throw readFailure(err, target, signal, progress);
  }
}

async function readText(source: SseSource, signal: AbortSignal | undefined, ctx: ErrorContext): Promise<string> {
  try {
    return await source.text();
  } catch (err) {
    throw mapNetworkError(err, signal, ctx);
  }
}

/**
 * Some gateways answer a streaming request with one JSON body: an error (mapped like an
 * in-stream error) or a non-streamed answer, which we do not accept silently.
 */
function jsonInsteadOfStream(text: string, target: ModelTarget, ctx: ErrorContext): Error {
  const body = safeJson(text);
  if (body !== null && typeof body === "object" && "error" in body) return mapStreamError(body, ctx);
  return new ProviderError(`${target.provider} answered a streaming request with a plain JSON body`, { kind: "invalid_response", body, ...ctx });
}

/** Parses one SSE `data:` payload; `undefined` for non-JSON lines (logged, then skipped). */
export function parseEventData(target: ModelTarget, message: EventSourceMessage): Record<string, unknown> | undefined {
  const value = safeJson(message.data);
  if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  target.log?.("warn", "skipping a malformed stream event", { provider: target.provider, data: message.data.slice(0, 200) });
  return undefined;
}

/** The URL with `extra` added to its query (the provider's `extraQuery`). */
function withQuery(url: string, extra: Record<string, string> | undefined): string {
  if (!extra || Object.keys(extra).length === 0) return url;
  const out = new URL(url);
  for (const [key, value] of Object.entries(extra)) out.searchParams.set(key, value);
  return out.toString();
}
