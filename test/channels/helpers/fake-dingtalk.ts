/**
 * A loopback fake of DingTalk's stream mode and robot APIs, from DingTalk's documented wire
 * format: `POST /v1.0/gateway/connections/open` (client id + secret + subscriptions → endpoint
 * and ticket), the stream WebSocket (CALLBACK frames on `/v1.0/im/bot/messages/get` that the
 * client acknowledges with `{code: 200, headers: {messageId}}`, SYSTEM pings it answers),
 * `POST /v1.0/oauth2/accessToken`, robot sends (`/v1.0/robot/oToMessages/batchSend`,
 * `/v1.0/robot/groupMessages/send`), session webhooks (`/robot/sendBySession`), file downloads
 * (`/v1.0/robot/messageFiles/download` → a temporary URL) and multipart media uploads
 * (`/media/upload`). Everything the bot does is recorded.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";

export const DINGTALK_CLIENT_ID = "dingfakeclientid0001";
export const DINGTALK_CLIENT_SECRET = "fake-dingtalk-client-secret";
export const DINGTALK_BOT_USER = "$:LWCP_v1:$fakebotuserid0001";
export const DINGTALK_GROUP = "cidFakeGroup0001==";
export const ROBOT_TOPIC = "/v1.0/im/bot/messages/get";

export interface DingTalkUser {
  id: string;
  username: string;
}

/** One message the bot sent, as DingTalk recorded it. */
export interface DingTalkSentMessage {
  /** `group:<conversationId>` for a group, else the user's staff id (the Python nanobot's chat ids). */
  chatId: string;
  via: "batchSend" | "groupSend" | "sessionWebhook";
  msgKey: string;
  msgParam: Record<string, string>;
  /** The Markdown or plain text ("" for an image or a file). */
  text: string;
  /** For a session-webhook send: the message whose webhook it used. */
  replyTo?: string;
  /** Users @-ed through a session webhook. */
  at: string[];
  files: Array<{ name: string; content: string }>;
}

export interface DingTalkFrameAck {
  messageId: string;
  code: number;
  data: string;
}

export interface PushOptions {
  from: DingTalkUser;
  text?: string;
  /** A group message (else a direct chat). */
  group?: boolean;
  /** The robot is @-ed (`isInAtList`). */
  atBot?: boolean;
  /** The message quotes this message of the robot's. */
  quotesBot?: boolean;
  /** A picture (alone, or with `text` as rich text) or a file message. */
  attachment?: { name: string; contentType: string; content: string };
  msgtype?: string;
  /** Extra fields of the robot message (content, …). */
  extra?: Record<string, unknown>;
}

export interface FakeDingTalk {
  url: string;
  messages: DingTalkSentMessage[];
  requests: Array<{ method: string; path: string; body: unknown }>;
  acks: DingTalkFrameAck[];
  /** Answers to the SYSTEM pings the fake sent. */
  pongs: DingTalkFrameAck[];
  /** Subscriptions of the last ticket request. */
  subscriptions: Array<{ type: string; topic: string }>;
  /** Tickets issued so far. */
  tickets(): number;
  /** WebSocket connections accepted so far. */
  connections(): number;
  liveSockets(): number;
  tokensIssued(): number;
  /** Sends a robot message as a CALLBACK frame (queued until a client is connected); returns its msgId. */
  pushMessage(options: PushOptions): string;
  /** Sends a SYSTEM ping frame; the client must answer it. */
  ping(): string;
  /** The next `count` robot sends (batchSend, group send, session webhook) fail with `status`. */
  failNextSends(count: number, status?: number, body?: Record<string, unknown>): void;
  /** Cuts every stream socket without a close frame, as a network drop would. */
  dropConnections(): void;
  /** Invalidates every access token issued so far (DingTalk answers 401 until a new one is fetched). */
  expireTokens(): void;
  close(): Promise<void>;
}

interface Session {
  msgId: string;
  chatId: string;
}

export async function startFakeDingTalk(): Promise<FakeDingTalk> {
  const messages: DingTalkSentMessage[] = [];
  const requests: FakeDingTalk["requests"] = [];
  const acks: DingTalkFrameAck[] = [];
  const pongs: DingTalkFrameAck[] = [];
  const uploads = new Map<string, { name: string; content: string }>();
  const files = new Map<string, { contentType: string; content: string }>();
  const sessions = new Map<string, Session>();
  const tickets = new Set<string>();
  const tokens = new Set<string>();
  const live = new Set<WebSocket>();
  const pending: string[] = [];
  const pings = new Set<string>();
  let failures: Array<{ status: number; body: Record<string, unknown> }> = [];
  let ticketCount = 0;
  let connectionCount = 0;
  let tokenCount = 0;
  let seq = 0;
  const subscriptions: Array<{ type: string; topic: string }> = [];

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { code: "ServiceUnavailable", message: String(error) });
    });
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    const url = new URL(req.url ?? "/", "http://x");
    const ticket = url.searchParams.get("ticket") ?? "";
    if (url.pathname !== "/connect" || !tickets.delete(ticket)) {
      socket.end("HTTP/1.1 401 Unauthorized\r\n\r\n");
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => onSocket(ws));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  function json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  }

  async function readRaw(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  function onSocket(ws: WebSocket): void {
    connectionCount++;
    live.add(ws);
    ws.on("close", () => live.delete(ws));
    ws.on("message", (raw) => {
      const frame = JSON.parse(String(raw)) as { code: number; headers: { messageId: string }; data: string };
      const record = { messageId: frame.headers.messageId, code: frame.code, data: frame.data };
      if (pings.delete(record.messageId)) pongs.push(record);
      else acks.push(record);
    });
    for (const data of pending.splice(0)) ws.send(data);
  }

  function frame(type: "CALLBACK" | "SYSTEM", topic: string, data: string): { id: string; text: string } {
    const id = `frame-${++seq}`;
    const headers = { appId: "fake-app", connectionId: "fake-connection", contentType: "application/json", messageId: id, time: String(Date.now()), topic };
    return { id, text: JSON.stringify({ specVersion: "1.0", type, headers, data }) };
  }

  function deliver(text: string): void {
    const sockets = [...live];
    if (sockets.length === 0) pending.push(text);
    for (const ws of sockets) ws.send(text);
  }

  function authorized(req: IncomingMessage, res: ServerResponse): boolean {
    const token = req.headers["x-acs-dingtalk-access-token"];
    if (typeof token === "string" && tokens.has(token)) return true;
    json(res, 401, { code: "InvalidAuthentication", message: "不合法的access_token", requestid: randomUUID() });
    return false;
  }

  function failed(res: ServerResponse): boolean {
    const failure = failures.shift();
    if (!failure) return false;
    json(res, failure.status, failure.body);
    return true;
  }

  function record(chatId: string, via: DingTalkSentMessage["via"], msgKey: string, msgParam: Record<string, string>, extra: Partial<DingTalkSentMessage> = {}): void {
    const text = msgParam.text ?? msgParam.content ?? "";
    const upload = uploads.get(msgParam.mediaId ?? msgParam.photoURL ?? "");
    const sentFiles = upload ? [upload] : msgKey === "sampleImageMsg" && msgParam.photoURL ? [{ name: msgParam.photoURL, content: "" }] : [];
    messages.push({ chatId, via, msgKey, msgParam, text, at: [], files: sentFiles, ...extra });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const reqUrl = new URL(req.url ?? "/", url);
    const path = reqUrl.pathname;
    const raw = await readRaw(req);
    const isJson = (req.headers["content-type"] ?? "").includes("json");
    const body = (isJson && raw.length ? JSON.parse(raw.toString("utf8")) : {}) as Record<string, unknown>;
    requests.push({ method: req.method ?? "GET", path, body: isJson ? body : raw.length });

    if (req.method === "POST" && path === "/v1.0/gateway/connections/open") {
      if (body.clientId !== DINGTALK_CLIENT_ID || body.clientSecret !== DINGTALK_CLIENT_SECRET) {
        return json(res, 401, { code: "InvalidAuthentication", message: "clientId or clientSecret is invalid" });
      }
      subscriptions.splice(0, subscriptions.length, ...((body.subscriptions as typeof subscriptions | undefined) ?? []));
      const ticket = randomUUID();
      tickets.add(ticket);
      ticketCount++;
      return json(res, 200, { endpoint: `ws://127.0.0.1:${port}/connect`, ticket });
    }
    if (req.method === "POST" && path === "/v1.0/oauth2/accessToken") {
      if (body.appKey !== DINGTALK_CLIENT_ID || body.appSecret !== DINGTALK_CLIENT_SECRET) {
        return json(res, 400, { code: "invalidClientIdOrSecret", message: "无效的clientId或者clientSecret" });
      }
      const token = `token-${++tokenCount}`;
      tokens.add(token);
      return json(res, 200, { accessToken: token, expireIn: 7200 });
    }
    if (req.method === "POST" && (path === "/v1.0/robot/oToMessages/batchSend" || path === "/v1.0/robot/groupMessages/send")) {
      if (!authorized(req, res) || failed(res)) return;
      if (body.robotCode !== DINGTALK_CLIENT_ID) return json(res, 400, { code: "invalidParameter.robotCode", message: "robot not found" });
      const msgParam = JSON.parse(String(body.msgParam)) as Record<string, string>;
      if (path.endsWith("batchSend")) {
        for (const user of body.userIds as string[]) record(user, "batchSend", String(body.msgKey), msgParam);
      } else {
        record(`group:${String(body.openConversationId)}`, "groupSend", String(body.msgKey), msgParam);
      }
      return json(res, 200, { processQueryKey: randomUUID(), invalidStaffIdList: [], flowControlledStaffIdList: [] });
    }
    if (req.method === "POST" && path === "/robot/sendBySession") {
      if (failed(res)) return;
      const session = sessions.get(reqUrl.searchParams.get("session") ?? "");
      if (!session) return json(res, 200, { errcode: 300001, errmsg: "session is expired" });
      const markdown = body.markdown as { title?: string; text?: string } | undefined;
      const text = markdown?.text ?? (body.text as { content?: string } | undefined)?.content ?? "";
      const at = ((body.at as { atUserIds?: string[] } | undefined)?.atUserIds ?? []).slice();
      record(session.chatId, "sessionWebhook", String(body.msgtype), { text }, { replyTo: session.msgId, at });
      return json(res, 200, { errcode: 0, errmsg: "ok" });
    }
    if (req.method === "POST" && path === "/v1.0/robot/messageFiles/download") {
      if (!authorized(req, res)) return;
      const code = String(body.downloadCode);
      if (!files.has(code)) return json(res, 400, { code: "invalidParameter.downloadCode", message: "downloadCode not found" });
      return json(res, 200, { downloadUrl: `${url}/files/${encodeURIComponent(code)}` });
    }
    if (req.method === "GET" && path.startsWith("/files/")) {
      const file = files.get(decodeURIComponent(path.slice("/files/".length)));
      if (!file) return json(res, 404, { message: "no such file" });
      res.writeHead(200, { "content-type": file.contentType }).end(file.content);
      return;
    }
    if (req.method === "POST" && path === "/media/upload") {
      const token = reqUrl.searchParams.get("access_token") ?? "";
      if (!tokens.has(token)) return json(res, 200, { errcode: 40014, errmsg: "不合法的access_token" });
      const form = await new Request(reqUrl, { method: "POST", headers: { "content-type": String(req.headers["content-type"]) }, body: raw }).formData();
      const media = form.get("media");
      if (!media || typeof media === "string") return json(res, 200, { errcode: 40005, errmsg: "no media part" });
      const mediaId = `@media-${++seq}`;
      uploads.set(mediaId, { name: media.name, content: Buffer.from(await media.arrayBuffer()).toString("utf8") });
      return json(res, 200, { errcode: 0, errmsg: "ok", media_id: mediaId, type: reqUrl.searchParams.get("type"), created_at: Date.now() });
    }
    json(res, 404, { code: "NotFound", message: `no route ${req.method ?? ""} ${path}` });
  }

  function pushMessage(options: PushOptions): string {
    const msgId = `msg${++seq}`;
    const group = options.group === true;
    const conversationId = group ? DINGTALK_GROUP : `cidDm${options.from.id}`;
    const session = randomUUID();
    sessions.set(session, { msgId, chatId: group ? `group:${DINGTALK_GROUP}` : options.from.id });
    const message: Record<string, unknown> = {
      msgId,
      conversationId,
      conversationType: group ? "2" : "1",
      chatbotCorpId: "dingcorp0001",
      chatbotUserId: DINGTALK_BOT_USER,
      robotCode: DINGTALK_CLIENT_ID,
      senderId: `$:LWCP_v1:$${options.from.id}`,
      senderStaffId: options.from.id,
      senderNick: options.from.username,
      senderCorpId: "dingcorp0001",
      isAdmin: false,
      createAt: Date.now(),
      sessionWebhook: `${url}/robot/sendBySession?session=${session}`,
      sessionWebhookExpiredTime: Date.now() + 90 * 60_000,
      msgtype: options.msgtype ?? "text",
    };
    if (group) {
      message.conversationTitle = "fake group";
      message.isInAtList = options.atBot === true;
      if (options.atBot) message.atUsers = [{ dingtalkId: DINGTALK_BOT_USER }];
    }
    if (options.text !== undefined) {
      const text: Record<string, unknown> = { content: options.text };
      if (options.quotesBot) {
        text.isReplyMsg = true;
        text.repliedMsg = { senderId: DINGTALK_BOT_USER, msgId: `msgBot${seq}`, msgType: "text", content: { text: "earlier answer" } };
      }
      message.text = text;
    }
    const attachment = options.attachment;
    if (attachment) {
      const code = `dl-${++seq}`;
      files.set(code, { contentType: attachment.contentType, content: attachment.content });
      const picture = attachment.contentType.startsWith("image/");
      if (picture && options.text) {
        message.msgtype = "richText";
        message.content = { richText: [{ text: options.text }, { type: "picture", downloadCode: code, pictureDownloadCode: `pic-${code}` }] };
        delete message.text;
      } else if (picture) {
        message.msgtype = "picture";
        message.content = { downloadCode: code, pictureDownloadCode: `pic-${code}` };
      } else {
        message.msgtype = "file";
        message.content = { downloadCode: code, fileName: attachment.name, fileId: `file-${code}`, spaceId: "1" };
      }
    }
    Object.assign(message, options.extra ?? {});
    deliver(frame("CALLBACK", ROBOT_TOPIC, JSON.stringify(message)).text);
    return msgId;
  }

  return {
    url,
    messages,
    requests,
    acks,
    pongs,
    subscriptions,
    tickets: () => ticketCount,
    connections: () => connectionCount,
    liveSockets: () => live.size,
    tokensIssued: () => tokenCount,
    pushMessage,
    ping() {
      const { id, text } = frame("SYSTEM", "ping", JSON.stringify({ opaque: randomUUID() }));
      pings.add(id);
      deliver(text);
      return id;
    },
    failNextSends(count: number, status = 502, body: Record<string, unknown> = { code: "ServiceUnavailable", message: "upstream unavailable" }) {
      failures = [...failures, ...Array.from({ length: count }, () => ({ status, body }))];
    },
    dropConnections() {
      for (const ws of live) ws.terminate();
    },
    expireTokens() {
      tokens.clear();
    },
    async close() {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
