/**
 * Where a provider's server-sent events come from: Node's `http`/`https` modules by default, or
 * an injected `fetch` (tests, proxies). Both give the status, headers, the whole body for error
 * answers, and the SSE messages one at a time with an idle limit.
 *
 * The `http` path exists for cost: fetch (undici + web streams + a TextDecoderStream and a
 * parser stream) takes ~1 ms of CPU per small streamed answer and ~40 ms to load on first use;
 * the `http` path feeds `eventsource-parser` straight from the socket's chunks.
 */
import { request as httpRequest } from "node:http";
import type { IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { createParser } from "eventsource-parser";
import type { EventSourceMessage } from "eventsource-parser";
import type { EncodedBody } from "./json-body.js";
import type { FetchFunction } from "./types.js";

/** What error mapping reads from response headers (satisfied by fetch's `Headers`). */
export interface HeaderReader {
  get(name: string): string | null;
}

export interface SseSource {
  readonly status: number;
  readonly headers: HeaderReader;
  /** The whole body as text (error answers, JSON instead of a stream). */
  text(): Promise<string>;
  /** The next message; undefined at the end. Rejects with `StallSignal` after `idleMs` of silence. */
  next(): Promise<EventSourceMessage | undefined>;
  /** Ends the request (idempotent). */
  close(): void;
}

export interface SseRequestInit {
  url: string;
  headers: Record<string, string>;
  body: EncodedBody;
  idleMs: number;
  signal: AbortSignal | undefined;
}

/** Thrown by `next()` when the server sent nothing for `idleMs`. */
export class StallSignal extends Error {}

/** Parsed messages buffered before the socket is paused (the consumer is slower than the server). */
const HIGH_WATER = 256;

/** Where a request goes, as `http.request` options: parsed once per endpoint, not per request. */
interface Endpoint {
  send: typeof httpRequest;
  protocol: string;
  hostname: string;
  port: string;
  path: string;
  auth: string | undefined;
}

const endpoints = new Map<string, Endpoint>();

function endpointOf(url: string): Endpoint {
  let endpoint = endpoints.get(url);
  if (!endpoint) {
    const u = new URL(url);
    endpoint = {
      send: u.protocol === "https:" ? httpsRequest : httpRequest,
      protocol: u.protocol,
      // `[::1]` in a URL, `::1` for the socket.
      hostname: u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname,
      port: u.port,
      path: `${u.pathname}${u.search}`,
      auth: u.username || u.password ? `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}` : undefined,
    };
    // A handful of endpoints per process; a runaway set (a URL per request) starts over.
    if (endpoints.size >= 64) endpoints.clear();
    endpoints.set(url, endpoint);
  }
  return endpoint;
}

/** What `http.request` rejects with when its signal aborts (AbortError, `ABORT_ERR`). */
function abortError(reason: unknown): Error {
  return Object.assign(new Error("The operation was aborted", { cause: reason }), { name: "AbortError", code: "ABORT_ERR" });
}

/**
 * POSTs with `http`/`https`; rejects with the socket or abort error when there is no response.
 * The caller's signal is watched here rather than handed to `http.request`, which would also
 * hang end-of-stream listeners on the request for it: one listener, removed when the request
 * closes, does the same.
 */
export function openWithNodeHttp(init: SseRequestInit): Promise<SseSource> {
  const { signal } = init;
  if (signal?.aborted) return Promise.reject(abortError(signal.reason));
  const { send, protocol, hostname, port, path, auth } = endpointOf(init.url);
  return new Promise((resolve, reject) => {
    const req = send({
      protocol,
      hostname,
      port,
      path,
      ...(auth ? { auth } : {}),
      method: "POST",
      headers: { ...init.headers, "content-length": String(init.body.byteLength) },
    });
    if (signal) {
      const onAbort = (): void => void req.destroy(abortError(signal.reason));
      signal.addEventListener("abort", onAbort, { once: true });
      req.once("close", () => signal.removeEventListener("abort", onAbort));
    }
    req.once("error", reject);
    req.once("response", (res) => {
      req.off("error", reject);
      resolve(new NodeSseSource(req, res, init.idleMs));
    });
    // One buffer, one write: each `write()` of a chunk costs more in the stream machinery than
    // copying it (a body of ~200 chunks, measured: ~75 µs more per call, client side).
    const { chunks, byteLength } = init.body;
    req.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, byteLength));
  });
}

class NodeSseSource implements SseSource {
  readonly status: number;
  readonly headers: HeaderReader;
  private readonly queue: EventSourceMessage[] = [];
  private ended = false;
  private failure: unknown;
  private wake: (() => void) | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private streaming = false;

  constructor(
    private readonly req: ReturnType<typeof httpRequest>,
    private readonly res: IncomingMessage,
    private readonly idleMs: number,
  ) {
    this.status = res.statusCode ?? 0;
    const raw = res.headers;
    this.headers = {
      get: (name) => {
        const value = raw[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
      },
    };
    res.setEncoding("utf8");
  }

  text(): Promise<string> {
    return new Promise((resolve, reject) => {
      let text = "";
      this.res.on("data", (chunk: string) => (text += chunk));
      this.res.once("end", () => resolve(text));
      this.res.once("error", reject);
      this.res.once("aborted", () => reject(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })));
    });
  }

  next(): Promise<EventSourceMessage | undefined> {
    if (!this.streaming) this.startStreaming();
    return new Promise((resolve, reject) => {
      const settle = (): boolean => {
        const message = this.queue.shift();
        if (message) {
          if (this.queue.length < HIGH_WATER / 2 && this.res.isPaused()) this.res.resume();
          resolve(message);
        } else if (this.failure !== undefined) reject(this.failure);
        else if (this.ended) resolve(undefined);
        else return false;
        return true;
      };
      if (!settle()) this.wake = () => void settle();
    });
  }

  close(): void {
    this.stopIdleTimer();
    if (!this.res.complete || !this.req.writableFinished) this.req.destroy();
    this.res.resume();
  }

  private startStreaming(): void {
    this.streaming = true;
    const parser = createParser({ onEvent: (message) => this.queue.push(message) });
    this.armIdleTimer();
    this.res.on("data", (chunk: string) => {
      this.armIdleTimer();
      parser.feed(chunk);
      if (this.queue.length >= HIGH_WATER) this.res.pause();
      this.notify();
    });
    this.res.once("end", () => this.finish());
    this.res.once("error", (err) => this.finish(err));
    // A connection that drops mid-body: 'aborted' (and sometimes no 'end' at all).
    this.res.once("aborted", () => this.finish(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })));
    this.req.once("error", (err) => this.finish(err));
  }

  /** Restarts the idle clock: one timer per stream, refreshed per chunk (not a new one each time). */
  private armIdleTimer(): void {
    if (this.idleTimer) {
      this.idleTimer.refresh();
      return;
    }
    this.idleTimer = setTimeout(() => {
      this.finish(new StallSignal());
      this.req.destroy();
    }, this.idleMs);
  }

  private stopIdleTimer(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  private finish(err?: unknown): void {
    if (this.ended || this.failure !== undefined) return;
    this.stopIdleTimer();
    if (err === undefined) this.ended = true;
    else this.failure = err;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/** POSTs with an injected `fetch`. */
export async function openWithFetch(fetchFn: FetchFunction, init: SseRequestInit): Promise<SseSource> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(init.signal?.reason);
  if (init.signal?.aborted) onAbort();
  init.signal?.addEventListener("abort", onAbort, { once: true });
  const detach = (): void => init.signal?.removeEventListener("abort", onAbort);
  let res: Response;
  try {
    const body = Buffer.concat(init.body.chunks).toString("utf8");
    res = await fetchFn(init.url, { method: "POST", headers: init.headers, body, signal: controller.signal });
  } catch (err) {
    detach();
    throw err;
  }
  let reader: ReadableStreamDefaultReader<EventSourceMessage> | undefined;
  return {
    status: res.status,
    headers: res.headers,
    text: () => res.text(),
    next: async () => {
      if (!res.body) return undefined;
      if (!reader) {
        // Loaded here: its class extends TransformStream, which would load web streams at start-up.
        const { EventSourceParserStream } = await import("eventsource-parser/stream");
        reader = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
      }
      const next = await readWithIdleTimeout(reader, init.idleMs, controller);
      return next.done ? undefined : next.value;
    },
    close: () => {
      detach();
      reader?.cancel().catch(() => undefined);
      controller.abort();
    },
  };
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
