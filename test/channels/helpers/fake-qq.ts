/**
 * A loopback fake of QQ's official bot platform, from its documented wire format: the app
 * access token endpoint, the OpenAPI (`GET /gateway`, C2C and group messages with passive
 * `msg_id`/`msg_seq` — a repeated pair is refused —, rich-media uploads), attachment downloads,
 * and the WebSocket gateway (HELLO, IDENTIFY → READY, HEARTBEAT → ACK, dispatches with `s`,
 * RESUME with a replay of missed events → RESUMED). Everything the bot does is recorded.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";

export const QQ_APP_ID = "102030405";
export const QQ_SECRET = "fake-qq-app-secret";
export const QQ_BOT = { id: "14298765432109876543", username: "nanobot" };
export const QQ_GROUP = "GROUPOPENIDAAAAAAAAAAAAAAAAAAAA1";

export interface QQSent {
  id: string;
  kind: "user" | "group";
  chatId: string;
  content: string;
  msgType: number;
  msgId?: string;
  msgSeq?: number;
  file?: { name: string; content: string };
}

export interface QQUserMessage {
  /** The user's openid (member_openid in groups). */
  author: string;
  content: string;
  /** "c2c": a direct message; "at": a group @-message; "all": a group message without @. */
  where: "c2c" | "at" | "all";
  attachment?: { name: string; contentType: string; content: string };
}

export interface FakeQQ {
  url: string;
  tokenUrl: string;
  sent: QQSent[];
  /** Payloads the client sent on the gateway. */
  gatewayOps: Array<{ op: number; d: unknown }>;
  tokenRequests: number;
  /** IDENTIFYs + RESUMEs so far. */
  sessions(): number;
  /** Dispatches the message event; returns the message id. */
  userSays(message: QQUserMessage): string;
  failNext(route: string, status: number, count?: number): void;
  dropGateway(): void;
  liveSockets(): number;
  close(): Promise<void>;
}

interface Failure {
  pattern: RegExp;
  status: number;
}

const id = (): string => randomBytes(12).toString("hex").toUpperCase();

export async function startFakeQQ(): Promise<FakeQQ> {
  const sent: QQSent[] = [];
  const gatewayOps: FakeQQ["gatewayOps"] = [];
  const failures: Failure[] = [];
  const uploads = new Map<string, { name: string; content: string }>();
  const attachments = new Map<string, string>();
  const usedSeqs = new Set<string>();
  const live = new Set<WebSocket>();
  const events: Array<{ s: number; t: string; d: unknown }> = [];
  const sessionId = "fake-qq-session";
  let token = "";
  let seq = 0;
  let sessions = 0;
  let tokenRequests = 0;

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { code: 500, message: String(error) });
    });
  });
  const wss = new WebSocketServer({ server, path: "/websocket" });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  function json(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  }

  async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    return raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", url).pathname;
    const method = req.method ?? "GET";
    const body = await readJson(req);
    if (method === "POST" && path === "/app/getAppAccessToken") {
      tokenRequests++;
      if (body.appId !== QQ_APP_ID || body.clientSecret !== QQ_SECRET) return json(res, 401, { code: 100016, message: "invalid appid or secret" });
      token = `token-${id()}`;
      return json(res, 200, { access_token: token, expires_in: "7200" });
    }
    const attachment = /^\/attachments\/(\w+)$/.exec(path);
    if (attachment) {
      const content = attachments.get(attachment[1]!);
      return content === undefined ? json(res, 404, { code: 404, message: "not found" }) : void res.writeHead(200).end(content);
    }
    if (req.headers.authorization !== `QQBot ${token}` || req.headers["x-union-appid"] !== QQ_APP_ID) return json(res, 401, { code: 11244, message: "token not exist or expire" });
    const key = `${method} ${path}`;
    const failure = failures.findIndex((f) => f.pattern.test(key));
    if (failure >= 0) {
      const { status } = failures.splice(failure, 1)[0]!;
      return json(res, status, { code: status, message: "scripted failure", trace_id: id() });
    }
    if (key === "GET /gateway") return json(res, 200, { url: `ws://127.0.0.1:${port}/websocket` });
    let m: RegExpExecArray | null;
    if ((m = /^POST \/v2\/(users|groups)\/(\w+)\/files$/.exec(key))) {
      const fileInfo = `FILEINFO${id()}`;
      const name = typeof body.file_name === "string" ? body.file_name : `image-${fileInfo.slice(-6)}`;
      uploads.set(fileInfo, { name, content: Buffer.from(String(body.file_data ?? ""), "base64").toString("utf8") });
      return json(res, 200, { file_uuid: id(), file_info: fileInfo, ttl: 3600 });
    }
    if ((m = /^POST \/v2\/(users|groups)\/(\w+)\/messages$/.exec(key))) {
      const msgId = typeof body.msg_id === "string" ? body.msg_id : undefined;
      const msgSeq = typeof body.msg_seq === "number" ? body.msg_seq : undefined;
      const pair = `${msgId}:${msgSeq}`;
      if (msgId && usedSeqs.has(pair)) return json(res, 400, { code: 40054005, message: "消息被去重，请检查请求msgseq" });
      if (msgId) usedSeqs.add(pair);
      const msgType = Number(body.msg_type ?? 0);
      const content = msgType === 2 ? String((body.markdown as { content?: string } | undefined)?.content ?? "") : String(body.content ?? "");
      const record: QQSent = { id: id(), kind: m[1] === "groups" ? "group" : "user", chatId: m[2]!, content, msgType };
      if (msgId) record.msgId = msgId;
      if (msgSeq !== undefined) record.msgSeq = msgSeq;
      if (msgType === 7) {
        const file = uploads.get(String((body.media as { file_info?: string } | undefined)?.file_info));
        if (!file) return json(res, 400, { code: 40034028, message: "file_info invalid" });
        record.file = file;
      }
      sent.push(record);
      return json(res, 200, { id: record.id, timestamp: new Date().toISOString() });
    }
    return json(res, 404, { code: 404, message: `not found (${key})` });
  }

  function send(socket: WebSocket, payload: Record<string, unknown>): void {
    socket.send(JSON.stringify(payload));
  }

  function dispatch(t: string, d: unknown): void {
    const event = { s: ++seq, t, d };
    events.push(event);
    for (const socket of live) send(socket, { op: 0, ...event });
  }

  wss.on("connection", (socket) => {
    send(socket, { op: 10, d: { heartbeat_interval: 41_250 } });
    socket.on("close", () => live.delete(socket));
    socket.on("message", (raw) => {
      const payload = JSON.parse(String(raw)) as { op: number; d: Record<string, unknown> | number | null };
      gatewayOps.push(payload);
      const d = (typeof payload.d === "object" ? payload.d : null) ?? {};
      if (payload.op === 1) return send(socket, { op: 11 });
      if (payload.op === 2) {
        if (d.token !== `QQBot ${token}`) return socket.close(4004, "invalid token");
        sessions++;
        live.add(socket);
        const ready = { s: ++seq, t: "READY", d: { version: 1, session_id: sessionId, user: { ...QQ_BOT, bot: true }, shard: [0, 1] } };
        events.push(ready);
        return send(socket, { op: 0, ...ready });
      }
      if (payload.op === 6) {
        if (d.token !== `QQBot ${token}` || d.session_id !== sessionId) return send(socket, { op: 9, d: false });
        sessions++;
        live.add(socket);
        for (const event of events.filter((e) => e.s > Number(d.seq ?? 0))) send(socket, { op: 0, ...event });
        dispatch("RESUMED", "");
      }
    });
  });

  return {
    url,
    tokenUrl: `${url}/app/getAppAccessToken`,
    sent,
    gatewayOps,
    get tokenRequests() {
      return tokenRequests;
    },
    sessions: () => sessions,
    userSays(message) {
      const messageId = `ROBOT1.0_${id()}`;
      const d: Record<string, unknown> = { id: messageId, content: message.where === "c2c" ? message.content : ` ${message.content}`, timestamp: new Date().toISOString() };
      if (message.where === "c2c") d.author = { id: message.author, user_openid: message.author };
      else {
        d.author = { id: message.author, member_openid: message.author };
        d.group_openid = QQ_GROUP;
        d.group_id = QQ_GROUP;
      }
      if (message.attachment) {
        const attachmentId = id();
        attachments.set(attachmentId, message.attachment.content);
        d.attachments = [{ content_type: message.attachment.contentType, filename: message.attachment.name, size: message.attachment.content.length, url: `${url}/attachments/${attachmentId}` }];
      }
      dispatch(message.where === "c2c" ? "C2C_MESSAGE_CREATE" : message.where === "at" ? "GROUP_AT_MESSAGE_CREATE" : "GROUP_MESSAGE_CREATE", d);
      return messageId;
    },
    failNext(route, status, count = 1) {
      const [method, pathPattern] = route.split(" ");
      const pattern = new RegExp(`^${method} ${pathPattern!.replace(/:\w+/g, "\\w+")}$`);
      for (let i = 0; i < count; i++) failures.push({ pattern, status });
    },
    dropGateway() {
      for (const socket of live) socket.terminate();
      live.clear();
    },
    liveSockets: () => live.size,
    async close() {
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
