import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type {
  FakeApi,
  FakeHttpError,
  FakeLLM,
  FakeLLMOptions,
  FakeRaw,
  FakeReply,
  FakeStep,
  RecordedRequest,
} from "./fake-llm-types.js";
import { anthropicRenderer } from "./render-anthropic.js";
import { chatRenderer } from "./render-chat.js";
import type { RenderContext, WireRenderer } from "./render-common.js";
import { responsesRenderer } from "./render-responses.js";
import { playEvents, playFrames, splitSseEvents } from "./sse-writer.js";

/**
 * The scripted fake LLM: a real HTTP server on 127.0.0.1 that answers each request with the
 * next queued step, rendered in the wire format of the endpoint that was called. It is strict
 * like agents-js's scripted model: a request with nothing queued (or to an unknown path) gets
 * a 500 *and* makes `assertDone()` throw, so a test cannot pass by accident.
 *
 *   const llm = await startFakeLLM({ steps: [{ toolCalls: [{ name: "ls", arguments: {} }] }, { text: "done" }] });
 *   // point the provider at llm.openaiBaseURL / llm.anthropicBaseURL, run, then:
 *   llm.assertDone(); await llm.close();
 */

const ENDPOINTS: Record<string, FakeApi> = {
  "/v1/chat/completions": "chat",
  "/v1/responses": "responses",
  "/v1/messages": "anthropic",
};

const RENDERERS: Record<FakeApi, WireRenderer> = {
  chat: chatRenderer,
  responses: responsesRenderer,
  anthropic: anthropicRenderer,
};

interface PendingSleep {
  timer: NodeJS.Timeout | undefined;
  resolve: (completed: boolean) => void;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function flatHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

class ScriptedLLM implements FakeLLM {
  readonly requests: RecordedRequest[] = [];
  private readonly queue: FakeStep[] = [];
  private readonly unexpected: string[] = [];
  private readonly sockets = new Set<Socket>();
  private readonly sleeps = new Set<PendingSleep>();
  private closing = false;
  private seq = 0;
  private connectionCount = 0;

  constructor(
    private readonly server: Server,
    readonly url: string,
  ) {
    server.on("connection", (socket: Socket) => {
      this.connectionCount++;
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch((err: unknown) => {
        this.unexpected.push(`fake-llm crashed answering ${req.method ?? "?"} ${req.url ?? "?"}: ${String(err)}`);
        res.destroy();
      });
    });
  }

  /** TCP connections accepted so far (a client that keeps its connection alive opens one). */
  get connections(): number {
    return this.connectionCount;
  }

  get openaiBaseURL(): string {
    return `${this.url}/v1`;
  }

  get anthropicBaseURL(): string {
    return this.url;
  }

  enqueue(...steps: FakeStep[]): void {
    this.queue.push(...steps);
  }

  pending(): number {
    return this.queue.length;
  }

  assertDone(): void {
    const problems = [...this.unexpected];
    if (this.queue.length > 0) {
      const kinds = this.queue.map((s) => s.kind ?? "reply").join(", ");
      problems.push(`${this.queue.length} scripted step(s) never requested: ${kinds}`);
    }
    if (problems.length > 0) throw new Error(`fake LLM: ${problems.join("; ")}`);
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const pending of this.sleeps) {
      clearTimeout(pending.timer);
      pending.resolve(false);
    }
    this.sleeps.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    // Stalled streams and keep-alive connections would otherwise hold the process open.
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  /** Resolves true after `ms`, or false at once when the fake is closing. */
  private sleep = (ms: number): Promise<boolean> => {
    if (this.closing) return Promise.resolve(false);
    if (ms <= 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const pending: PendingSleep = {
        timer: setTimeout(() => {
          this.sleeps.delete(pending);
          resolve(true);
        }, ms),
        resolve,
      };
      this.sleeps.add(pending);
    });
  };

  /** Resolves true once `until` settles, or false at once when the fake is closing. */
  private wait = (until: Promise<unknown>): Promise<boolean> => {
    if (this.closing) return Promise.resolve(false);
    return new Promise((resolve) => {
      const pending: PendingSleep = { timer: undefined, resolve };
      this.sleeps.add(pending);
      const settle = (): void => {
        if (!this.sleeps.delete(pending)) return;
        resolve(true);
      };
      until.then(settle, settle);
    });
  };

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const text = await readBody(req);
    const api = method === "POST" ? ENDPOINTS[path] : undefined;
    if (api === undefined) return this.refuse(res, `unexpected request ${method} ${path}: not an endpoint the fake serves`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return this.refuse(res, `unexpected request ${method} ${path}: body is not JSON`);
    }
    if (!isObject(body)) return this.refuse(res, `unexpected request ${method} ${path}: body is not a JSON object`);
    const stream = body["stream"] === true;
    const query = new URL(req.url ?? "/", "http://127.0.0.1").search;
    this.requests.push({ api, method, path, ...(query ? { query } : {}), headers: flatHeaders(req), body, stream, at: Date.now() });
    const step = this.queue.shift();
    if (step === undefined) {
      return this.refuse(res, `unexpected request #${this.requests.length} ${method} ${path} (${api}): no step queued`);
    }
    this.seq++;
    switch (step.kind) {
      case "hangup":
        req.socket.destroy();
        return;
      case "error":
        return this.sendError(res, api, step);
      case "raw":
        return this.sendRaw(res, api, step);
      default:
        return this.sendReply(res, api, step, body, stream);
    }
  }

  /** 500 with an OpenAI-shaped error body, and remembered so `assertDone()` fails the test. */
  private refuse(res: ServerResponse, problem: string): void {
    this.unexpected.push(problem);
    const body = { error: { message: `fake LLM: ${problem}`, type: "fake_llm_unexpected_request", param: null, code: null } };
    res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  }

  private idHeader(api: FakeApi): Record<string, string> {
    const id = `req_fake${this.seq.toString().padStart(6, "0")}`;
    return api === "anthropic" ? { "request-id": id } : { "x-request-id": id };
  }

  private async sendError(res: ServerResponse, api: FakeApi, step: FakeHttpError): Promise<void> {
    if (!(await this.sleep(step.delayMs ?? 0))) return;
    const body = typeof step.body === "string" ? step.body : JSON.stringify(step.body);
    res.writeHead(step.status, { "content-type": "application/json", ...this.idHeader(api), ...step.headers });
    res.end(body);
  }

  private async sendRaw(res: ServerResponse, api: FakeApi, step: FakeRaw): Promise<void> {
    const text = typeof step.body === "string" ? step.body : step.body.toString("utf8");
    const looksLikeSse = /^(data|event):/.test(text.trimStart());
    const contentType = step.contentType ?? (looksLikeSse ? "text/event-stream" : "application/json");
    res.writeHead(step.status ?? 200, { "content-type": contentType, ...this.idHeader(api), ...step.headers });
    if (step.eventDelayMs !== undefined && contentType.startsWith("text/event-stream")) {
      res.flushHeaders();
      return playEvents(res, splitSseEvents(text), { chunkDelayMs: step.eventDelayMs, sleep: this.sleep });
    }
    res.end(step.body);
  }

  private async sendReply(
    res: ServerResponse,
    api: FakeApi,
    reply: FakeReply,
    body: Record<string, unknown>,
    stream: boolean,
  ): Promise<void> {
    if (!(await this.sleep(reply.delayMs ?? 0))) return;
    const streamOptions = body["stream_options"];
    const ctx: RenderContext = {
      model: typeof body["model"] === "string" ? body["model"] : "fake-model",
      seq: this.seq,
      includeUsage: isObject(streamOptions) && streamOptions["include_usage"] === true,
    };
    const renderer = RENDERERS[api];
    if (!stream) {
      res.writeHead(200, { "content-type": "application/json", ...this.idHeader(api) });
      res.end(JSON.stringify(renderer.json(reply, ctx)));
      return;
    }
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      ...this.idHeader(api),
    });
    res.flushHeaders();
    await playFrames(res, renderer.frames(reply, ctx), {
      chunkDelayMs: reply.chunkDelayMs,
      fault: reply.fault,
      sleep: this.sleep,
      hold: reply.hold,
      wait: this.wait,
    });
  }
}

/** Starts a fake on an ephemeral loopback port. Always `close()` it (e.g. in `afterEach`). */
export async function startFakeLLM(options: FakeLLMOptions = {}): Promise<FakeLLM> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const fake = new ScriptedLLM(server, `http://127.0.0.1:${port}`);
  if (options.steps !== undefined) fake.enqueue(...options.steps);
  return fake;
}
