/**
 * A loopback fake of the Feishu / Lark Open Platform, from its documented wire format: the
 * tenant access token (`auth/v3/tenant_access_token/internal`), `bot/v3/info`, `im/v1/messages`
 * (create with `receive_id_type`, reply, patch of cards, delete), image and file uploads
 * (multipart), message resources, reactions — and the long connection: `POST
 * /callback/ws/endpoint` hands out a WebSocket URL whose frames are protobuf `pbbp2.Frame`s
 * (control frames: ping → pong carrying the client config; data frames: events, which the
 * client acknowledges by sending the frame back with a `{code}` payload). Events are queued
 * while no client is connected and pushed on the next connection. Everything the bot does is
 * recorded.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";
import { decodeFrame, encodeFrame, encryptEvent } from "./feishu-frames.js";

export const FEISHU_APP_ID = "cli_a1b2c3d4e5f60718";
export const FEISHU_APP_SECRET = "fake-feishu-app-secret";
export const FEISHU_BOT = { openId: "ou_bot0000000000000000000000000001", name: "nanobot" };
export const FEISHU_GROUP_CHAT = "oc_group000000000000000000000000001";
const TENANT_TOKEN = "t-fake-tenant-access-token";

export interface FeishuUser {
  openId: string;
  name: string;
}

export interface FeishuSentMessage {
  id: string;
  /** receive_id of a create (an open_id or chat id); for a reply, where the replied message lives. */
  chatId: string;
  msgType: string;
  /** The `content` JSON as last sent or patched. */
  content: string;
  /** The readable text of `content` (text, post lines, card markdown). */
  text: string;
  /** Texts of the patches, in order. */
  edits: string[];
  /** The message a reply quoted. */
  replyTo?: string;
  replyInThread?: boolean;
  files: Array<{ name: string; content: string }>;
  deleted?: boolean;
}

export interface FeishuRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  authorization?: string;
}

export interface FeishuDispatch {
  sender: FeishuUser;
  /** A group message (else a direct message). */
  group?: boolean;
  text?: string;
  /** Users @mentioned, in order: `@_user_1`… are put in front of the text. */
  mentions?: FeishuUser[];
  /** Reply to this message (sets parent_id and root_id). */
  parentId?: string;
  /** The message is inside this topic. */
  threadId?: string;
  /** With text: a post of the text and the image; alone: a `file` message. */
  attachment?: { name: string; contentType: string; content: string };
  /** A raw message type and content (JSON object) instead of text. */
  raw?: { msgType: string; content: Record<string, unknown> };
  senderType?: string;
}

export interface FakeFeishu {
  url: string;
  messages: FeishuSentMessage[];
  requests: FeishuRequest[];
  reactions: Array<{ action: "add" | "remove"; messageId: string; emoji: string; reactionId: string }>;
  /** Acknowledgements the client sent back for pushed events (the `code` of its payload). */
  acks: Array<{ messageId: string; code: number }>;
  /** Control frames the client sent (pings). */
  pings(): number;
  /** Long connections opened so far. */
  sessions(): number;
  liveSockets(): number;
  /** Pushes an `im.message.receive_v1` event; returns the message id. */
  dispatchMessage(options: FeishuDispatch): string;
  /** The next `count` requests to `METHOD /path` (`:id` matches one segment) fail with HTTP `status`. */
  failNext(route: string, status: number, count?: number, body?: Record<string, unknown>): void;
  /** Cuts every long connection without a close frame, as a network drop would. */
  dropConnection(): void;
  /** While set, `callback/ws/endpoint` answers with this error code. */
  refuseEndpoint(code: number | undefined): void;
  close(): Promise<void>;
}

export interface FakeFeishuOptions {
  appId?: string;
  appSecret?: string;
  /** Events are pushed AES-encrypted with this key (the console's Encrypt Key). */
  encryptKey?: string;
  /** Seconds between the client's pings (the ClientConfig the endpoint hands out). */
  pingIntervalSec?: number;
}

/** The readable text of a message's content, by type (what a Feishu user would read). */
export function readableText(msgType: string, content: string): string {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(content) as Record<string, unknown>;
  } catch {
    return content;
  }
  if (msgType === "text") return String(body.text ?? "");
  if (msgType === "post") {
    const post = (body.zh_cn ?? body.en_us ?? body) as { title?: string; content?: Array<Array<{ text?: string }>> };
    return [post.title, ...(post.content ?? []).map((row) => row.map((e) => e.text ?? "").join(""))].filter((l) => l !== undefined && l !== "").join("\n");
  }
  if (msgType === "interactive") {
    const elements = (body.elements ?? (body.body as { elements?: unknown[] } | undefined)?.elements ?? []) as Array<{ content?: string }>;
    return elements.map((e) => e.content ?? "").join("\n");
  }
  return "";
}

interface Failure {
  pattern: RegExp;
  status: number;
  body: Record<string, unknown>;
}

export async function startFakeFeishu(options: FakeFeishuOptions = {}): Promise<FakeFeishu> {
  const appId = options.appId ?? FEISHU_APP_ID;
  const appSecret = options.appSecret ?? FEISHU_APP_SECRET;
  const messages: FeishuSentMessage[] = [];
  const requests: FeishuRequest[] = [];
  const reactions: FakeFeishu["reactions"] = [];
  const acks: FakeFeishu["acks"] = [];
  const uploads = new Map<string, { name: string; content: string }>();
  /** Resources of the users' messages: `messageId/key` → bytes and type. */
  const resources = new Map<string, { content: Buffer; contentType: string }>();
  /** Where each message lives, for replies: an open_id (direct) or a chat id. */
  const chatOf = new Map<string, string>();
  const failures: Failure[] = [];
  const live = new Set<WebSocket>();
  const queue: Uint8Array[] = [];
  let sessions = 0;
  let pings = 0;
  let refusing: number | undefined;
  let next = 1;
  const newId = (prefix: string): string => `${prefix}_${String(next++).padStart(24, "0")}`;

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ code: 1, msg: String(error) }));
    });
  });
  const wss = new WebSocketServer({ server, path: "/ws" });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const clientConfig = { PingInterval: options.pingIntervalSec ?? 120, ReconnectCount: -1, ReconnectInterval: 0, ReconnectNonce: 0 };

  wss.on("connection", (socket) => {
    sessions++;
    live.add(socket);
    socket.on("close", () => live.delete(socket));
    socket.on("message", (data: Buffer) => {
      const frame = decodeFrame(new Uint8Array(data));
      const type = frame.headers.find((h) => h.key === "type")?.value;
      if (frame.method === 0 && type === "ping") {
        pings++;
        socket.send(encodeFrame({ ...frame, headers: [{ key: "type", value: "pong" }], payload: new TextEncoder().encode(JSON.stringify(clientConfig)) }));
      } else if (frame.method === 1) {
        const messageId = frame.headers.find((h) => h.key === "message_id")?.value ?? "";
        const body = JSON.parse(new TextDecoder().decode(frame.payload ?? new Uint8Array())) as { code: number };
        acks.push({ messageId, code: body.code });
      }
    });
    for (const frame of queue.splice(0)) socket.send(frame);
  });

  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };

  async function readBody(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async function multipart(req: IncomingMessage, raw: Buffer): Promise<FormData> {
    return new Request(url, { method: "POST", headers: { "content-type": String(req.headers["content-type"]) }, body: raw }).formData();
  }

  function record(id: string, chatId: string, msgType: string, content: string, extra: Partial<FeishuSentMessage> = {}): FeishuSentMessage {
    const files: FeishuSentMessage["files"] = [];
    if (msgType !== "text" && msgType !== "post" && msgType !== "interactive") {
      const body = JSON.parse(content) as { image_key?: string; file_key?: string };
      const upload = uploads.get(body.image_key ?? body.file_key ?? "");
      if (upload) files.push(upload);
    }
    const message: FeishuSentMessage = { id, chatId, msgType, content, text: readableText(msgType, content), edits: [], files, ...extra };
    messages.push(message);
    chatOf.set(id, chatId);
    return message;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = new URL(req.url ?? "/", url);
    const path = parsed.pathname;
    const method = req.method ?? "GET";
    const raw = await readBody(req);
    const isMultipart = String(req.headers["content-type"] ?? "").startsWith("multipart/form-data");
    const body: unknown = isMultipart ? "(multipart)" : raw.length ? JSON.parse(raw.toString("utf8")) : undefined;
    const authorization = req.headers.authorization;
    requests.push({ method, path, query: Object.fromEntries(parsed.searchParams), body, ...(authorization ? { authorization } : {}) });
    const route = `${method} ${path}`;
    const failure = failures.find((f) => f.pattern.test(route));
    if (failure) {
      failures.splice(failures.indexOf(failure), 1);
      return json(res, failure.status, failure.body);
    }
    const b = (body ?? {}) as Record<string, unknown>;

    if (route === "POST /open-apis/auth/v3/tenant_access_token/internal") {
      if (b.app_id !== appId || b.app_secret !== appSecret) return json(res, 200, { code: 10014, msg: "app secret invalid" });
      return json(res, 200, { code: 0, msg: "ok", tenant_access_token: TENANT_TOKEN, expire: 7200 });
    }
    if (route === "POST /callback/ws/endpoint") {
      if (b.AppID !== appId || b.AppSecret !== appSecret) return json(res, 200, { code: 403, msg: "app id or secret invalid", data: {} });
      if (refusing !== undefined) return json(res, 200, { code: refusing, msg: "refused", data: {} });
      const wsUrl = `ws://127.0.0.1:${port}/ws?fpid=1&device_id=fake-device&service_id=7&ticket=fake`;
      return json(res, 200, { code: 0, msg: "ok", data: { URL: wsUrl, ClientConfig: clientConfig } });
    }
    if (authorization !== `Bearer ${TENANT_TOKEN}`) return json(res, 401, { code: 99991663, msg: "Invalid access token for authorization" });

    if (route === "GET /open-apis/bot/v3/info") {
      return json(res, 200, { code: 0, msg: "ok", bot: { activate_status: 2, app_name: FEISHU_BOT.name, open_id: FEISHU_BOT.openId, ip_white_list: [] } });
    }
    if (route === "POST /open-apis/im/v1/messages") {
      const type = parsed.searchParams.get("receive_id_type");
      if (type !== "open_id" && type !== "chat_id") return json(res, 400, { code: 99992402, msg: "field validation failed: receive_id_type" });
      const receiveId = String(b.receive_id);
      if ((type === "chat_id") !== receiveId.startsWith("oc_")) return json(res, 400, { code: 230001, msg: `invalid receive_id for ${type}` });
      const id = newId("om");
      record(id, receiveId, String(b.msg_type), String(b.content));
      return json(res, 200, { code: 0, msg: "success", data: { message_id: id, chat_id: receiveId, msg_type: b.msg_type } });
    }
    let m = /^POST \/open-apis\/im\/v1\/messages\/([^/]+)\/reply$/.exec(route);
    if (m) {
      const parent = chatOf.get(m[1]!);
      if (!parent) return json(res, 400, { code: 230011, msg: "the message was withdrawn or does not exist" });
      const id = newId("om");
      record(id, parent, String(b.msg_type), String(b.content), { replyTo: m[1]!, ...(b.reply_in_thread ? { replyInThread: true } : {}) });
      return json(res, 200, { code: 0, msg: "success", data: { message_id: id } });
    }
    m = /^PATCH \/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(route);
    if (m) {
      const message = messages.find((x) => x.id === m![1]);
      if (!message) return json(res, 400, { code: 230011, msg: "message not found" });
      if (message.msgType !== "interactive") return json(res, 400, { code: 230001, msg: "only cards can be updated" });
      const card = JSON.parse(String(b.content)) as { config?: { update_multi?: boolean } };
      if (!card.config?.update_multi && !(JSON.parse(message.content) as { config?: { update_multi?: boolean } }).config?.update_multi) {
        return json(res, 400, { code: 230020, msg: "card is not shared (update_multi)" });
      }
      message.content = String(b.content);
      message.text = readableText("interactive", message.content);
      message.edits.push(message.text);
      return json(res, 200, { code: 0, msg: "success", data: {} });
    }
    m = /^DELETE \/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(route);
    if (m) {
      const message = messages.find((x) => x.id === m![1]);
      if (message) message.deleted = true;
      return json(res, 200, { code: 0, msg: "success", data: {} });
    }
    if (route === "POST /open-apis/im/v1/images" || route === "POST /open-apis/im/v1/files") {
      if (!isMultipart) return json(res, 400, { code: 234001, msg: "expected multipart/form-data" });
      const form = await multipart(req, raw);
      const image = route.endsWith("images");
      const file = form.get(image ? "image" : "file");
      if (!(file instanceof File)) return json(res, 400, { code: 234001, msg: "no file part" });
      const name = image ? file.name : String(form.get("file_name"));
      const key = image ? `img_v3_${next++}` : `file_v3_${next++}`;
      uploads.set(key, { name, content: Buffer.from(await file.arrayBuffer()).toString("utf8") });
      requests.at(-1)!.body = Object.fromEntries([...form.entries()].map(([k, v]) => [k, typeof v === "string" ? v : `(file ${v.name})`]));
      return json(res, 200, { code: 0, msg: "success", data: image ? { image_key: key } : { file_key: key } });
    }
    m = /^GET \/open-apis\/im\/v1\/messages\/([^/]+)\/resources\/([^/]+)$/.exec(route);
    if (m) {
      const resource = resources.get(`${m[1]!}/${m[2]!}`);
      if (!resource || !["image", "file"].includes(parsed.searchParams.get("type") ?? "")) return json(res, 400, { code: 234003, msg: "file not found" });
      res.writeHead(200, { "content-type": resource.contentType }).end(resource.content);
      return;
    }
    m = /^POST \/open-apis\/im\/v1\/messages\/([^/]+)\/reactions$/.exec(route);
    if (m) {
      const emoji = (b.reaction_type as { emoji_type?: string } | undefined)?.emoji_type ?? "";
      const reactionId = `rc_${next++}`;
      reactions.push({ action: "add", messageId: m[1]!, emoji, reactionId });
      return json(res, 200, { code: 0, msg: "success", data: { reaction_id: reactionId, reaction_type: { emoji_type: emoji } } });
    }
    m = /^DELETE \/open-apis\/im\/v1\/messages\/([^/]+)\/reactions\/([^/]+)$/.exec(route);
    if (m) {
      const added = reactions.find((r) => r.action === "add" && r.reactionId === m![2]);
      if (!added) return json(res, 400, { code: 231001, msg: "reaction not found" });
      reactions.push({ action: "remove", messageId: m[1]!, emoji: added.emoji, reactionId: m[2]! });
      return json(res, 200, { code: 0, msg: "success", data: { reaction_id: m[2] } });
    }
    json(res, 404, { code: 404, msg: `no route ${route}` });
  }

  function push(envelope: Record<string, unknown>): void {
    const plain = JSON.stringify(envelope);
    const payload = options.encryptKey ? JSON.stringify({ encrypt: encryptEvent(options.encryptKey, plain) }) : plain;
    const frame = encodeFrame({
      SeqID: 0,
      LogID: 0,
      service: 7,
      method: 1,
      headers: [
        { key: "type", value: "event" },
        { key: "message_id", value: String((envelope.header as { event_id: string }).event_id) },
        { key: "sum", value: "1" },
        { key: "seq", value: "0" },
        { key: "trace_id", value: `trace-${next++}` },
      ],
      payload: new TextEncoder().encode(payload),
    });
    const socket = [...live].find((s) => s.readyState === s.OPEN);
    if (socket) socket.send(frame);
    else queue.push(frame);
  }

  return {
    url,
    messages,
    requests,
    reactions,
    acks,
    pings: () => pings,
    sessions: () => sessions,
    liveSockets: () => [...live].filter((s) => s.readyState === s.OPEN).length,
    dispatchMessage(o) {
      const messageId = newId("om");
      const chatId = o.group ? FEISHU_GROUP_CHAT : `oc_p2p_${o.sender.openId.slice(3)}`;
      chatOf.set(messageId, o.group ? FEISHU_GROUP_CHAT : o.sender.openId);
      const mentions = (o.mentions ?? []).map((u, i) => ({
        key: `@_user_${i + 1}`,
        id: { open_id: u.openId, union_id: `on_${u.openId.slice(3)}`, user_id: u.openId === FEISHU_BOT.openId ? "" : `u_${u.name}` },
        name: u.name,
        tenant_key: "fake-tenant",
      }));
      const text = [...mentions.map((x) => x.key), o.text ?? ""].join(" ").trim();
      let msgType = "text";
      let content: Record<string, unknown> = { text };
      if (o.raw) {
        msgType = o.raw.msgType;
        content = o.raw.content;
      } else if (o.attachment) {
        const image = o.attachment.contentType.startsWith("image/");
        const key = image ? `img_in_${next++}` : `file_in_${next++}`;
        resources.set(`${messageId}/${key}`, { content: Buffer.from(o.attachment.content), contentType: o.attachment.contentType });
        if (image) {
          msgType = "post";
          content = { title: "", content: [[{ tag: "text", text }], [{ tag: "img", image_key: key }]] };
        } else {
          msgType = "file";
          content = { file_key: key, file_name: o.attachment.name };
        }
      }
      push({
        schema: "2.0",
        header: { event_id: newId("ev"), event_type: "im.message.receive_v1", create_time: String(Date.now()), token: "", app_id: appId, tenant_key: "fake-tenant" },
        event: {
          sender: { sender_id: { open_id: o.sender.openId, union_id: `on_${o.sender.openId.slice(3)}`, user_id: `u_${o.sender.name}` }, sender_type: o.senderType ?? "user", tenant_key: "fake-tenant" },
          message: {
            message_id: messageId,
            ...(o.parentId ? { parent_id: o.parentId, root_id: o.parentId } : {}),
            ...(o.threadId ? { thread_id: o.threadId } : {}),
            create_time: String(Date.now()),
            chat_id: chatId,
            chat_type: o.group ? "group" : "p2p",
            message_type: msgType,
            content: JSON.stringify(content),
            ...(mentions.length ? { mentions } : {}),
          },
        },
      });
      return messageId;
    },
    failNext(route, status, count = 1, body = { code: status >= 500 ? 1 : 99991400, msg: "fake failure" }) {
      const [method, path] = route.split(" ");
      const pattern = new RegExp(`^${method!} ${path!.replace(/:\w+/g, "[^/]+")}$`);
      for (let i = 0; i < count; i++) failures.push({ pattern, status, body });
    },
    dropConnection() {
      for (const socket of live) socket.terminate();
    },
    refuseEndpoint(code) {
      refusing = code;
    },
    async close() {
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
