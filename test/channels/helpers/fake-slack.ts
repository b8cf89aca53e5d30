/**
 * A loopback fake of the Slack platform, from Slack's documented wire format: the Web API
 * (`POST /api/<method>` with form-encoded, multipart or JSON bodies and a Bearer token, answering
 * `{ ok, … }`), the file upload flow (files.getUploadURLExternal → POST to the returned
 * upload_url → files.completeUploadExternal), `url_private` downloads that need the bot token
 * (Slack answers an HTML login page without it), and Socket Mode: apps.connections.open with the
 * app token returns a WebSocket URL; the socket says `hello`, delivers `events_api` envelopes and
 * expects each to be acknowledged with its `envelope_id`. Unacknowledged envelopes are sent again
 * on the next connection, as Slack retries them. Everything the bot does is recorded.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";

export const SLACK_BOT_TOKEN = "xoxb-fake-bot-token";
export const SLACK_APP_TOKEN = "xapp-fake-app-token";
export const SLACK_BOT = { id: "U0BOT", name: "nanobot" };
export const SLACK_GROUP_CHANNEL = "C0GROUP";

export interface SlackUser {
  id: string;
  username: string;
}

export interface SlackSentMessage {
  ts: string;
  channel: string;
  text: string;
  edits: string[];
  threadTs?: string;
  deleted: boolean;
  files: Array<{ name: string; content: string }>;
}

export interface SlackApiCall {
  method: string;
  token: string;
  params: Record<string, unknown>;
}

export interface SlackSays {
  user: SlackUser;
  text: string;
  /** A channel message (else the user's DM). */
  channel?: string;
  /** Also deliver Slack's `app_mention` event for the same message. */
  appMention?: boolean;
  threadTs?: string;
  parentUserId?: string;
  file?: { name: string; mimetype: string; content: string };
}

export interface FakeSlack {
  url: string;
  /** What `apiRoot` points at. */
  apiRoot: string;
  messages: SlackSentMessage[];
  calls: SlackApiCall[];
  reactions: Array<{ action: "add" | "remove"; channel: string; ts: string; name: string }>;
  /** Socket Mode envelopes the client acknowledged. */
  acks: string[];
  /** WebSocket sessions opened so far. */
  sessions(): number;
  liveSockets(): number;
  dmChannel(user: SlackUser): string;
  /** The `message` event a user's message makes (and its ts), without delivering it. */
  messageEvent(says: SlackSays): { event: Record<string, unknown>; ts: string };
  /** Delivers any event over Socket Mode; resolves once the client acknowledged it. */
  deliverEvent(event: Record<string, unknown>): Promise<void>;
  /** Delivers the message over Socket Mode; resolves with its ts once the client acknowledged it. */
  say(says: SlackSays): Promise<string>;
  /** Earlier messages of a thread, for conversations.replies. */
  setThread(channel: string, threadTs: string, messages: Array<{ ts: string; user: string; text: string }>): void;
  /** The next `count` calls of `method` fail: HTTP `status`, or 429 with Retry-After `retryAfterS`. */
  failNext(method: string, count: number, failure?: { status?: number; retryAfterS?: number; error?: string }): void;
  callsOf(method: string): SlackApiCall[];
  /** Cuts every socket without a close frame, as a network drop would. */
  dropSockets(): void;
  /** Sends Slack's `disconnect` message (the server is being recycled). */
  askToReconnect(): void;
  close(): Promise<void>;
}

interface Failure {
  method: string;
  status: number;
  retryAfterS?: number;
  error?: string;
}

interface Envelope {
  envelope_id: string;
  type: "events_api";
  payload: Record<string, unknown>;
  accepts_response_payload: boolean;
  retry_attempt: number;
  retry_reason: string;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Form-encoded, multipart (files become `{ fileName, content }`) or JSON, as the Web API accepts. */
async function parseParams(req: IncomingMessage, body: Buffer): Promise<Record<string, unknown>> {
  const type = req.headers["content-type"] ?? "";
  if (type.includes("application/json")) return JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  if (type.includes("multipart/form-data")) {
    const form = await new Request("http://fake.local/", { method: "POST", headers: { "content-type": type }, body }).formData();
    const out: Record<string, unknown> = {};
    for (const [key, value] of form.entries()) {
      out[key] = typeof value === "string" ? value : { fileName: value.name, content: Buffer.from(await value.arrayBuffer()).toString("utf8") };
    }
    return out;
  }
  return Object.fromEntries(new URLSearchParams(body.toString("utf8")));
}

function json(res: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", ...headers });
  res.end(JSON.stringify(body));
}

export async function startFakeSlack(): Promise<FakeSlack> {
  const messages: SlackSentMessage[] = [];
  const calls: SlackApiCall[] = [];
  const reactions: FakeSlack["reactions"] = [];
  const acks: string[] = [];
  const failures: Failure[] = [];
  const downloads = new Map<string, { content: string; mimetype: string }>();
  const uploads = new Map<string, { name: string; content?: string }>();
  const threads = new Map<string, Array<{ ts: string; user: string; text: string }>>();
  const pending = new Map<string, Envelope>();
  const ackWaiters = new Map<string, () => void>();
  const live = new Set<WebSocket>();
  let sessions = 0;
  let seq = 0;
  const nextTs = (): string => `${1_700_000_000 + ++seq}.${String(seq).padStart(6, "0")}`;

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, { ok: false, error: String(error) }, 500);
    });
  });
  const wss = new WebSocketServer({ server, path: "/link" });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  wss.on("connection", (socket) => {
    sessions++;
    live.add(socket);
    socket.on("close", () => live.delete(socket));
    socket.on("message", (data) => {
      const reply = JSON.parse(String(data)) as { envelope_id?: string };
      if (!reply.envelope_id) return;
      acks.push(reply.envelope_id);
      pending.delete(reply.envelope_id);
      ackWaiters.get(reply.envelope_id)?.();
      ackWaiters.delete(reply.envelope_id);
    });
    socket.send(JSON.stringify({ type: "hello", num_connections: live.size, debug_info: { host: "fake-slack", approximate_connection_time: 3600 }, connection_info: { app_id: "A0FAKE" } }));
    // Slack retries what was not acknowledged.
    for (const envelope of pending.values()) socket.send(JSON.stringify({ ...envelope, retry_attempt: envelope.retry_attempt + 1, retry_reason: "timeout" }));
  });

  function record(method: string, token: string, params: Record<string, unknown>): void {
    calls.push({ method, token, params });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "").split("?")[0] ?? "";
    const auth = (req.headers.authorization ?? "").replace(/^Bearer /, "");
    if (req.method === "GET" && path.startsWith("/files/")) {
      const file = downloads.get(path.slice("/files/".length));
      if (!file) return json(res, { ok: false, error: "file_not_found" }, 404);
      // Slack sends its sign-in page to a request without the bot token.
      if (auth !== SLACK_BOT_TOKEN) {
        res.writeHead(200, { "content-type": "text/html" });
        res.end("<!doctype html><html>sign in</html>");
        return;
      }
      res.writeHead(200, { "content-type": file.mimetype });
      res.end(file.content);
      return;
    }
    const body = await readBody(req);
    if (path.startsWith("/upload/")) {
      const id = path.slice("/upload/".length);
      const upload = uploads.get(id);
      if (!upload) return json(res, { ok: false, error: "invalid_upload" }, 404);
      const params = await parseParams(req, body);
      const part = Object.values(params).find((v): v is { content: string } => typeof v === "object" && v !== null && "content" in v);
      upload.content = part ? part.content : body.toString("utf8");
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(`OK - ${body.length}`);
      return;
    }
    if (!path.startsWith("/api/")) return json(res, { ok: false, error: "unknown_path" }, 404);
    const method = path.slice("/api/".length);
    const params = await parseParams(req, body);
    record(method, auth, params);
    const failure = failures.findIndex((f) => f.method === method);
    if (failure >= 0) {
      const f = failures.splice(failure, 1)[0]!;
      if (f.retryAfterS !== undefined) return json(res, { ok: false, error: "ratelimited" }, 429, { "retry-after": String(f.retryAfterS) });
      if (f.error) return json(res, { ok: false, error: f.error });
      res.writeHead(f.status, { "content-type": "text/plain" });
      res.end("upstream failure");
      return;
    }
    if (method === "apps.connections.open") {
      if (auth !== SLACK_APP_TOKEN) return json(res, { ok: false, error: "invalid_auth" });
      return json(res, { ok: true, url: `ws://127.0.0.1:${port}/link?ticket=${sessions + 1}` });
    }
    if (auth !== SLACK_BOT_TOKEN) return json(res, { ok: false, error: "invalid_auth" });
    switch (method) {
      case "auth.test":
        return json(res, { ok: true, url: "https://fake.slack.com/", team: "Fake", user: SLACK_BOT.name, team_id: "T0FAKE", user_id: SLACK_BOT.id, bot_id: "B0BOT" });
      case "chat.postMessage": {
        const ts = nextTs();
        const threadTs = typeof params.thread_ts === "string" && params.thread_ts ? params.thread_ts : undefined;
        messages.push({ ts, channel: String(params.channel), text: String(params.text ?? ""), edits: [], deleted: false, files: [], ...(threadTs ? { threadTs } : {}) });
        return json(res, { ok: true, channel: params.channel, ts, message: { type: "message", text: params.text, user: SLACK_BOT.id, ts } });
      }
      case "chat.update": {
        const message = messages.find((m) => m.ts === params.ts && m.channel === params.channel);
        if (!message) return json(res, { ok: false, error: "message_not_found" });
        message.text = String(params.text ?? "");
        message.edits.push(message.text);
        return json(res, { ok: true, channel: params.channel, ts: params.ts, text: params.text });
      }
      case "chat.delete": {
        const message = messages.find((m) => m.ts === params.ts && m.channel === params.channel);
        if (!message) return json(res, { ok: false, error: "message_not_found" });
        message.deleted = true;
        return json(res, { ok: true, channel: params.channel, ts: params.ts });
      }
      case "reactions.add":
      case "reactions.remove":
        reactions.push({ action: method === "reactions.add" ? "add" : "remove", channel: String(params.channel), ts: String(params.timestamp), name: String(params.name) });
        return json(res, { ok: true });
      case "files.getUploadURLExternal": {
        const id = `F0${++seq}`;
        uploads.set(id, { name: String(params.filename) });
        return json(res, { ok: true, upload_url: `${url}/upload/${id}`, file_id: id });
      }
      case "files.completeUploadExternal": {
        const list = JSON.parse(String(params.files)) as Array<{ id: string; title?: string }>;
        const files = list.map((f) => ({ name: uploads.get(f.id)?.name ?? f.title ?? f.id, content: uploads.get(f.id)?.content ?? "" }));
        const threadTs = typeof params.thread_ts === "string" && params.thread_ts ? params.thread_ts : undefined;
        if (params.channel_id) {
          messages.push({ ts: nextTs(), channel: String(params.channel_id), text: String(params.initial_comment ?? ""), edits: [], deleted: false, files, ...(threadTs ? { threadTs } : {}) });
        }
        return json(res, { ok: true, files: list.map((f) => ({ id: f.id, title: f.title ?? "" })) });
      }
      case "conversations.replies": {
        const thread = threads.get(`${String(params.channel)}:${String(params.ts)}`) ?? [];
        return json(res, { ok: true, messages: thread.slice(0, Number(params.limit ?? 1000)), has_more: false });
      }
      default:
        return json(res, { ok: false, error: "unknown_method" });
    }
  }

  const dmChannel = (user: SlackUser): string => `D${user.id.slice(1)}`;
  let eventSeq = 0;

  function messageEvent(says: SlackSays): { event: Record<string, unknown>; ts: string } {
    const ts = nextTs();
    const channel = says.channel ?? dmChannel(says.user);
    const event: Record<string, unknown> = {
      type: "message",
      channel,
      channel_type: channel.startsWith("D") ? "im" : "channel",
      user: says.user.id,
      text: says.text,
      ts,
      event_ts: ts,
      team: "T0FAKE",
    };
    if (says.threadTs) event.thread_ts = says.threadTs;
    if (says.parentUserId) event.parent_user_id = says.parentUserId;
    if (says.file) {
      const id = `F0${++seq}`;
      downloads.set(id, { content: says.file.content, mimetype: says.file.mimetype });
      event.subtype = "file_share";
      event.files = [
        {
          id,
          name: says.file.name,
          title: says.file.name,
          mimetype: says.file.mimetype,
          size: Buffer.byteLength(says.file.content),
          url_private: `${url}/files/${id}`,
          url_private_download: `${url}/files/${id}?download=1`,
        },
      ];
    }
    return { event, ts };
  }

  function deliver(event: Record<string, unknown>): Promise<void> {
    eventSeq++;
    const envelope: Envelope = {
      envelope_id: `env-${eventSeq}`,
      type: "events_api",
      payload: { token: "verification-token", team_id: "T0FAKE", api_app_id: "A0FAKE", event, type: "event_callback", event_id: `Ev0${eventSeq}`, event_time: Math.floor(Date.now() / 1000) },
      accepts_response_payload: false,
      retry_attempt: 0,
      retry_reason: "",
    };
    pending.set(envelope.envelope_id, envelope);
    const acked = new Promise<void>((resolve) => ackWaiters.set(envelope.envelope_id, resolve));
    for (const socket of live) socket.send(JSON.stringify(envelope));
    return acked;
  }

  return {
    url,
    apiRoot: `${url}/api/`,
    messages,
    calls,
    reactions,
    acks,
    sessions: () => sessions,
    liveSockets: () => live.size,
    dmChannel,
    messageEvent,
    deliverEvent: deliver,
    async say(says) {
      const { event, ts } = messageEvent(says);
      await deliver(event);
      if (says.appMention) {
        const { channel_type: _type, ...mention } = event;
        await deliver({ ...mention, type: "app_mention" });
      }
      return ts;
    },
    setThread(channel, threadTs, thread) {
      threads.set(`${channel}:${threadTs}`, thread);
    },
    failNext(method, count, failure = {}) {
      for (let i = 0; i < count; i++) failures.push({ method, status: failure.status ?? 503, ...failure });
    },
    callsOf: (method) => calls.filter((c) => c.method === method),
    dropSockets() {
      for (const socket of live) socket.terminate();
    },
    askToReconnect() {
      for (const socket of live) socket.send(JSON.stringify({ type: "disconnect", reason: "refresh_requested", debug_info: { host: "fake-slack" } }));
    },
    async close() {
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
