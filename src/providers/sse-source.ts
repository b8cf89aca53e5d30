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
import { onAbort } from "../core/on-abort.js";
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
  /**
   * Hands each message to `onMessage` as it is parsed, until the body ends (resolves) or
   * `onMessage` returns false (resolves; the rest is not read). Rejects with what `onMessage`
   * threw, with `StallSignal` after `idleMs` of silence, or with the connection's error.
   */
  each(onMessage: (message: EventSourceMessage) => boolean | void): Promise<void>;
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

/** What `each()` rejects with when the server sent nothing for `idleMs`. */
export class StallSignal extends Error {}

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
    if (signal) req.once("close", onAbort(signal, () => void req.destroy(abortError(signal.reason))));
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

/** A dropped connection (`aborted`, sometimes without an `end`), as Node's own socket errors read. */
const hangUp = (): Error => Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });

/**
 * The response read as it arrives: each socket chunk is fed to the parser, and each message it
 * completes goes straight to the consumer, with no queue and no promise per message (the
 * consumer is synchronous, so there is nothing to buffer for it).
 */
class NodeSseSource implements SseSource {
  readonly status: number;
  readonly headers: HeaderReader;
  private idleTimer: NodeJS.Timeout | undefined;
  /** Ends `each()`: set while it runs. */
  private settle: ((err?: unknown) => void) | undefined;

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
      this.res.once("aborted", () => reject(hangUp()));
    });
  }

  each(onMessage: (message: EventSourceMessage) => boolean | void): Promise<void> {
    return new Promise((resolve, reject) => {
      const { req, res } = this;
      let done = false;
      const settle = (err?: unknown): void => {
        if (done) return;
        done = true;
        this.settle = undefined;
        this.stopIdleTimer();
        if (err === undefined) resolve();
        else reject(err);
      };
      this.settle = settle;
      const parser = createParser({
        onEvent: (message) => {
          if (done) return;
          let more: boolean | void;
          try {
            more = onMessage(message);
          } catch (err) {
            settle(err);
            return;
          }
          if (more === false) settle();
        },
      });
      this.armIdleTimer();
      res.on("data", (chunk: string) => {
        if (done) return;
        this.armIdleTimer();
        parser.feed(chunk);
      });
      res.once("end", () => settle());
      res.once("error", settle);
      res.once("aborted", () => settle(hangUp()));
      req.once("error", settle);
    });
  }

  close(): void {
    this.stopIdleTimer();
    if (!this.res.complete || !this.req.writableFinished) this.req.destroy();
    this.res.resume();
  }

  /** Restarts the idle clock: one timer per stream, refreshed per chunk (not a new one each time). */
  private armIdleTimer(): void {
    if (this.idleTimer) {
      this.idleTimer.refresh();
      return;
    }
    this.idleTimer = setTimeout(() => {
      this.settle?.(new StallSignal());
      this.req.destroy();
    }, this.idleMs);
  }

  private stopIdleTimer(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }
}

/** POSTs with an injected `fetch`. */
export async function openWithFetch(fetchFn: FetchFunction, init: SseRequestInit): Promise<SseSource> {
  const controller = new AbortController();
  const detach = onAbort(init.signal, () => controller.abort(init.signal?.reason));
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
    each: async (onMessage) => {
      if (!res.body) return;
      // Loaded here: its class extends TransformStream, which would load web streams at start-up.
      const { EventSourceParserStream } = await import("eventsource-parser/stream");
      reader = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
      for (;;) {
        const next = await readWithIdleTimeout(reader, init.idleMs, controller);
        if (next.done || onMessage(next.value) === false) return;
      }
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
  let stopWatching = (): void => undefined;
  const interrupted = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new StallSignal());
      controller.abort();
    }, idleMs);
    stopWatching = onAbort(controller.signal, () => reject(controller.signal.reason));
  });
  try {
    return await Promise.race([reader.read(), interrupted]);
  } finally {
    clearTimeout(timer);
    stopWatching();
  }
}
