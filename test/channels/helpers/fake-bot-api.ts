/**
 * A loopback fake of the Telegram Bot API: enough methods for grammY's polling and our sends.
 * Updates are fed with `pushMessage`; every call is recorded; failures can be scripted per
 * method. HTML texts are checked for balanced tags so the plain-text fallback can be tested.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const BOT_TOKEN = "123456:TEST-token";
export const BOT = { id: 999, username: "nano_bot", first_name: "Nano" };

export interface ApiCall {
  method: string;
  params: Record<string, unknown>;
}

export interface ScriptedFailure {
  error_code: number;
  description: string;
  parameters?: Record<string, unknown>;
  /** Perform the call, then answer with the error anyway. */
  afterPerforming?: boolean;
}

export interface SentMessage {
  message_id: number;
  chat_id: string;
  text: string;
  parse_mode?: string;
  /** `reply_parameters.message_id` of the send. */
  reply_to?: number;
  /** The forum topic it was sent to (`message_thread_id`). */
  thread_id?: number;
  edits: string[];
}

export interface PushOptions {
  chatId: number;
  chatType?: "private" | "group" | "supergroup";
  from: { id: number; username?: string; first_name?: string };
  text?: string;
  entities?: Array<Record<string, unknown>>;
  replyToBot?: boolean;
  photo?: { fileId: string; uniqueId: string };
  /** A message in this forum topic (`message_thread_id`, `is_topic_message`). */
  topicId?: number;
  document?: { fileId: string; uniqueId: string; fileName: string; mimeType: string };
}

export interface FakeBotApi {
  url: string;
  calls: ApiCall[];
  messages: SentMessage[];
  /** Queues a user's message as an update; returns its message_id. */
  pushMessage(options: PushOptions): number;
  addFile(fileId: string, filePath: string, content: string): void;
  /** Scripts the next calls of `method`: a failure, or "pass" to let one call through first. */
  failNext(method: string, failure: ScriptedFailure | "pass"): void;
  callsOf(method: string): ApiCall[];
  /** Cuts every waiting long poll at the socket, as a network drop would; returns how many. */
  dropConnections(): number;
  /** Long polls (getUpdates) waiting for updates right now. */
  waitingPolls(): number;
  close(): Promise<void>;
}

interface Waiter {
  offset: number;
  req: IncomingMessage;
  respond: (updates: unknown[]) => void;
}

export async function startFakeBotApi(): Promise<FakeBotApi> {
  const calls: ApiCall[] = [];
  const messages: SentMessage[] = [];
  const updates: Array<{ update_id: number; message: unknown }> = [];
  const files = new Map<string, { path: string; content: string }>();
  const failures = new Map<string, Array<ScriptedFailure | "pass">>();
  const waiters = new Set<Waiter>();
  let nextUpdateId = 1;
  let nextMessageId = 100;

  const pending = (offset: number): unknown[] => updates.filter((u) => u.update_id >= offset);

  const methods: Record<string, (p: Record<string, unknown>) => unknown> = {
    getMe: () => ({ ...BOT, is_bot: true, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false }),
    deleteWebhook: () => true,
    setWebhook: () => true,
    sendChatAction: () => true,
    deleteMessage: () => true,
    sendMessage: (p) => {
      const sent: SentMessage = { message_id: nextMessageId++, chat_id: String(p.chat_id), text: String(p.text), edits: [] };
      if (typeof p.parse_mode === "string") sent.parse_mode = p.parse_mode;
      const replyTo = (p.reply_parameters as { message_id?: unknown } | undefined)?.message_id;
      if (typeof replyTo === "number") sent.reply_to = replyTo;
      if (typeof p.message_thread_id === "number") sent.thread_id = p.message_thread_id;
      messages.push(sent);
      return { message_id: sent.message_id, date: 0, chat: { id: Number(p.chat_id), type: "private" }, text: sent.text };
    },
    editMessageText: (p) => {
      const target = messages.find((m) => m.message_id === Number(p.message_id));
      if (!target) throw { error_code: 400, description: "Bad Request: message to edit not found" };
      if (target.text === p.text) throw { error_code: 400, description: "Bad Request: message is not modified" };
      target.text = String(p.text);
      target.edits.push(target.text);
      return { message_id: target.message_id, date: 0, chat: { id: Number(p.chat_id), type: "private" }, text: target.text };
    },
    sendPhoto: (p) => ({ message_id: nextMessageId++, date: 0, chat: { id: Number(p.chat_id), type: "private" }, photo: [] }),
    sendDocument: (p) => ({ message_id: nextMessageId++, date: 0, chat: { id: Number(p.chat_id), type: "private" } }),
    getFile: (p) => {
      const file = files.get(String(p.file_id));
      if (!file) throw { error_code: 400, description: "Bad Request: invalid file_id" };
      return { file_id: p.file_id, file_unique_id: `u-${String(p.file_id)}`, file_size: file.content.length, file_path: file.path };
    },
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500).end(String(error));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    const filePrefix = `/file/bot${BOT_TOKEN}/`;
    if (url.pathname.startsWith(filePrefix)) {
      const path = decodeURIComponent(url.pathname.slice(filePrefix.length));
      const file = [...files.values()].find((f) => f.path === path);
      if (!file) return void res.writeHead(404).end();
      return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(file.content);
    }
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
    if (!match || match[1] !== BOT_TOKEN) return reply(res, { ok: false, error_code: 401, description: "Unauthorized" }, 401);
    const method = match[2]!;
    const params = await readParams(req);
    calls.push({ method, params });
    if (method === "getUpdates") return getUpdates(req, res, params);
    const scripted = failures.get(method)?.shift();
    const failure = scripted === "pass" ? undefined : scripted;
    if (failure && !failure.afterPerforming) return reply(res, { ok: false, ...failure }, failure.error_code);
    const impl = methods[method];
    if (!impl) return reply(res, { ok: false, error_code: 404, description: `Not Found: method ${method}` }, 404);
    const htmlProblem = params.parse_mode === "HTML" ? checkHtml(String(params.text ?? params.caption ?? "")) : undefined;
    if (htmlProblem) return reply(res, { ok: false, error_code: 400, description: `Bad Request: can't parse entities: ${htmlProblem}` }, 400);
    try {
      const result = impl(params);
      if (failure) return reply(res, { ok: false, ...failure }, failure.error_code);
      reply(res, { ok: true, result });
    } catch (error) {
      const e = error as { error_code: number; description: string };
      reply(res, { ok: false, ...e }, e.error_code);
    }
  }

  function getUpdates(req: IncomingMessage, res: ServerResponse, params: Record<string, unknown>): void {
    const offset = Number(params.offset ?? 0);
    // Confirmed updates are gone for good, as on the real server.
    for (let i = updates.length - 1; i >= 0; i--) if (updates[i]!.update_id < offset) updates.splice(i, 1);
    const ready = pending(offset);
    const timeout = Number(params.timeout ?? 0);
    if (ready.length || timeout === 0) return reply(res, { ok: true, result: ready });
    const waiter: Waiter = { offset, req, respond: (result) => reply(res, { ok: true, result }) };
    const timer = setTimeout(() => {
      waiters.delete(waiter);
      reply(res, { ok: true, result: [] });
    }, timeout * 1000);
    waiter.respond = (result) => {
      clearTimeout(timer);
      waiters.delete(waiter);
      reply(res, { ok: true, result });
    };
    waiters.add(waiter);
    req.on("close", () => {
      clearTimeout(timer);
      waiters.delete(waiter);
    });
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    messages,
    pushMessage(options) {
      const message: Record<string, unknown> = {
        message_id: nextMessageId++,
        date: Math.floor(Date.now() / 1000),
        chat: { id: options.chatId, type: options.chatType ?? "private", ...(options.chatType && options.chatType !== "private" ? { title: "group" } : {}) },
        from: { is_bot: false, first_name: "User", ...options.from },
      };
      if (options.text !== undefined) message[options.photo || options.document ? "caption" : "text"] = options.text;
      if (options.entities) message[options.photo || options.document ? "caption_entities" : "entities"] = options.entities;
      if (options.topicId !== undefined) Object.assign(message, { message_thread_id: options.topicId, is_topic_message: true });
      if (options.replyToBot) message.reply_to_message = { message_id: 1, date: 0, chat: message.chat, from: { ...BOT, is_bot: true }, text: "earlier" };
      if (options.photo) message.photo = [{ file_id: "small", file_unique_id: "small-u", width: 90, height: 90 }, { file_id: options.photo.fileId, file_unique_id: options.photo.uniqueId, width: 800, height: 600 }];
      if (options.document) message.document = { file_id: options.document.fileId, file_unique_id: options.document.uniqueId, file_name: options.document.fileName, mime_type: options.document.mimeType };
      const update = { update_id: nextUpdateId++, message };
      updates.push(update);
      for (const waiter of [...waiters]) {
        const ready = pending(waiter.offset);
        if (ready.length) waiter.respond(ready);
      }
      return message.message_id as number;
    },
    addFile(fileId, filePath, content) {
      files.set(fileId, { path: filePath, content });
    },
    failNext(method, failure) {
      const list = failures.get(method) ?? [];
      list.push(failure);
      failures.set(method, list);
    },
    callsOf(method) {
      return calls.filter((c) => c.method === method);
    },
    dropConnections() {
      const cut = [...waiters];
      for (const waiter of cut) {
        waiters.delete(waiter);
        waiter.req.socket.destroy();
      }
      return cut.length;
    },
    waitingPolls: () => waiters.size,
    async close() {
      for (const waiter of [...waiters]) waiter.respond([]);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function reply(res: ServerResponse, body: unknown, status = 200): void {
  if (res.writableEnded) return;
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/** JSON bodies and multipart forms (grammY uses multipart when a file is uploaded). */
async function readParams(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const type = req.headers["content-type"] ?? "";
  if (body.length === 0) return {};
  if (type.startsWith("application/json")) return JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  if (type.startsWith("multipart/form-data")) return parseMultipart(body, type);
  return {};
}

/** A minimal multipart reader: text fields as strings, files as `{ fileName, content }`. */
function parseMultipart(body: Buffer, contentType: string): Record<string, unknown> {
  const boundary = /boundary="?([^";]+)"?/.exec(contentType)?.[1];
  if (!boundary) return {};
  const out: Record<string, unknown> = {};
  for (const part of body.toString("latin1").split(`--${boundary}`)) {
    const headerEnd = part.indexOf("\r\n\r\n");
    if (headerEnd < 0) continue;
    const headers = part.slice(0, headerEnd);
    const content = part.slice(headerEnd + 4).replace(/\r\n$/, "");
    const name = /name="([^"]+)"/.exec(headers)?.[1];
    if (!name) continue;
    const fileName = /filename="?([^";\r\n]*)"?/.exec(headers)?.[1];
    out[name] = fileName !== undefined ? { fileName, content: Buffer.from(content, "latin1").toString("utf8") } : Buffer.from(content, "latin1").toString("utf8");
  }
  // grammY names the file part by a random id and refers to it as `attach://<id>`.
  for (const [key, value] of Object.entries(out)) {
    if (typeof value === "string" && value.startsWith("attach://")) {
      out[key] = out[value.slice("attach://".length)];
      delete out[value.slice("attach://".length)];
    }
  }
  return out;
}

const ALLOWED_TAGS = new Set(["b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "code", "pre", "a", "blockquote", "span", "tg-spoiler"]);

/** Returns a problem description when tags are unknown or unbalanced, like Telegram's parser. */
function checkHtml(text: string): string | undefined {
  const stack: string[] = [];
  for (const match of text.matchAll(/<(\/?)([a-zA-Z-]+)[^>]*>/g)) {
    const [, closing, rawName] = match;
    const name = rawName!.toLowerCase();
    if (!ALLOWED_TAGS.has(name)) return `unsupported start tag "${name}"`;
    if (!closing) stack.push(name);
    else if (stack.pop() !== name) return `can't find end tag corresponding to start tag "${name}"`;
  }
  if (stack.length) return `can't find end tag corresponding to start tag "${stack[stack.length - 1]!}"`;
  if (/<(?![a-zA-Z/])/.test(text)) return "unexpected <";
  return undefined;
}
