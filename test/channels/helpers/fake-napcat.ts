/**
 * A loopback fake of NapCat's OneBot v11 WebSocket server, from the OneBot v11 wire format:
 * a forward WebSocket that checks `Authorization: Bearer <token>`, sends a lifecycle and a
 * heartbeat meta event on connect (before it answers anything), answers actions by `echo`
 * (`get_login_info`, `send_msg`, `get_msg`, `get_group_member_info`, NapCat's `get_file` and
 * `set_input_status`) with
 * `{status, retcode, data, echo}`, and posts message and notice events as arrays of segments
 * (or CQ-code strings). Images and files users send are served over HTTP. Everything the bot
 * sends is recorded.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";

export const NAPCAT_BOT = { id: 3_100_000_001, nickname: "nanobot" };
export const NAPCAT_TOKEN = "fake-napcat-token";
export const NAPCAT_GROUP = 700_000_001;

export interface NapcatSegment {
  type: string;
  data: Record<string, unknown>;
}

export interface NapcatSent {
  messageId: number;
  messageType: "private" | "group";
  /** The user's or the group's number. */
  targetId: number;
  segments: NapcatSegment[];
  /** The text segments joined. */
  text: string;
  /** The id a reply segment quotes. */
  replyTo?: string;
  /** Images and files sent (name and UTF-8 content, decoded from base64:// or the URL). */
  files: Array<{ name: string; content: string; type: string }>;
}

export interface NapcatAttachment {
  name: string;
  mimeType: string;
  content: string;
  /** "image" (default), or "file" (a group file, fetched with get_file when `withUrl` is false). */
  as?: "image" | "file";
  withUrl?: boolean;
  /** The size NapCat declares (file_size), when it differs from the content. */
  declaredSize?: number;
}

export interface NapcatUserMessage {
  userId: number;
  text: string;
  /** Default "private". */
  messageType?: "private" | "group";
  groupId?: number;
  /** How a group message addresses the bot. */
  address?: "none" | "mention" | "reply";
  /** The message a reply quotes; default a bot message from before (known only through get_msg). */
  replyToId?: number;
  nickname?: string;
  card?: string;
  attachment?: NapcatAttachment;
  /** "string" posts CQ codes, as NapCat's messagePostFormat "string". */
  format?: "array" | "string";
}

export interface FakeNapcat {
  /** The WebSocket server address (wsUrl). */
  url: string;
  sent: NapcatSent[];
  actions: Array<{ action: string; params: Record<string, unknown> }>;
  /** Users shown "typing…" (NapCat's set_input_status, event_type 1), one entry per call. */
  typing: number[];
  /** Connections accepted so far (with the right token). */
  connections(): number;
  liveSockets(): number;
  /** Posts a message event to every connected client; returns its message_id. */
  userSays(message: NapcatUserMessage): number;
  /** Posts a group_increase notice. */
  memberJoins(groupId: number, userId: number, card: string): void;
  /** The next `count` calls of `action` fail with `retcode` (NapCat's generic failure is 200). */
  failNext(action: string, count: number, retcode?: number): void;
  dropConnection(): void;
  close(): Promise<void>;
}

const cqEscape = (text: string, param: boolean): string => {
  const out = text.replace(/&/g, "&amp;").replace(/\[/g, "&#91;").replace(/\]/g, "&#93;");
  return param ? out.replace(/,/g, "&#44;") : out;
};

function toCQ(segments: NapcatSegment[]): string {
  return segments
    .map((s) => (s.type === "text" ? cqEscape(String(s.data.text), false) : `[CQ:${s.type}${Object.entries(s.data).map(([k, v]) => `,${k}=${cqEscape(String(v), true)}`).join("")}]`))
    .join("");
}

export async function startFakeNapcat(options: { token?: string } = {}): Promise<FakeNapcat> {
  const token = options.token ?? NAPCAT_TOKEN;
  const sent: NapcatSent[] = [];
  const actions: FakeNapcat["actions"] = [];
  const live = new Set<WebSocket>();
  const served = new Map<string, { content: string; mimeType: string }>();
  const files = new Map<string, { name: string; content: string }>();
  const history = new Map<number, { userId: number }>();
  const members = new Map<string, string>();
  const typing: number[] = [];
  const failures: Array<{ action: string; retcode: number }> = [];
  let connections = 0;
  let nextId = 1_000;

  const server: Server = createServer((req, res) => {
    const item = served.get((req.url ?? "").replace(/^\/media\//, ""));
    if (!item) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": item.mimeType }).end(item.content);
  });
  const wss = new WebSocketServer({
    server,
    verifyClient: (info: { req: { headers: Record<string, string | string[] | undefined> } }) => !token || info.req.headers.authorization === `Bearer ${token}`,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const http = `http://127.0.0.1:${port}`;

  const serve = (content: string, mimeType: string): string => {
    const key = randomBytes(6).toString("hex");
    served.set(key, { content, mimeType });
    return `${http}/media/${key}`;
  };

  const decode = async (file: string): Promise<string> => {
    if (file.startsWith("base64://")) return Buffer.from(file.slice(9), "base64").toString("utf8");
    return (await fetch(file)).text();
  };

  const record = async (params: Record<string, unknown>): Promise<number> => {
    const segments = (params.message ?? []) as NapcatSegment[];
    const messageId = nextId++;
    const out: NapcatSent = {
      messageId,
      messageType: params.message_type === "group" ? "group" : "private",
      targetId: Number(params.message_type === "group" ? params.group_id : params.user_id),
      segments,
      text: segments.filter((s) => s.type === "text").map((s) => String(s.data.text)).join(""),
      files: [],
    };
    for (const s of segments) {
      if (s.type === "reply") out.replyTo = String(s.data.id);
      if (["image", "file", "record", "video"].includes(s.type)) out.files.push({ type: s.type, name: String(s.data.name ?? s.type), content: await decode(String(s.data.file)) });
    }
    history.set(messageId, { userId: NAPCAT_BOT.id });
    sent.push(out);
    return messageId;
  };

  const answer = async (action: string, params: Record<string, unknown>): Promise<{ retcode: number; data: unknown; wording?: string }> => {
    switch (action) {
      case "get_login_info":
        return { retcode: 0, data: { user_id: NAPCAT_BOT.id, nickname: NAPCAT_BOT.nickname } };
      case "send_msg":
        return { retcode: 0, data: { message_id: await record(params) } };
      case "set_input_status":
        typing.push(Number(params.user_id));
        return { retcode: 0, data: null };
      case "get_msg": {
        const found = history.get(Number(params.message_id));
        return found ? { retcode: 0, data: { message_id: params.message_id, user_id: found.userId, sender: { user_id: found.userId } } } : { retcode: 1404, data: null, wording: "message not found" };
      }
      case "get_group_member_info": {
        const card = members.get(`${String(params.group_id)}:${String(params.user_id)}`);
        return card ? { retcode: 0, data: { user_id: params.user_id, card, nickname: card } } : { retcode: 1404, data: null, wording: "member not found" };
      }
      case "get_file": {
        const file = files.get(String(params.file_id));
        return file
          ? { retcode: 0, data: { file: `/napcat/cache/${file.name}`, url: serve(file.content, "application/octet-stream"), file_size: String(file.content.length), file_name: file.name } }
          : { retcode: 1404, data: null, wording: "file not found" };
      }
      default:
        return { retcode: 1404, data: null, wording: `unknown action ${action}` };
    }
  };

  wss.on("connection", (socket) => {
    connections++;
    live.add(socket);
    socket.on("close", () => live.delete(socket));
    const now = Math.floor(Date.now() / 1000);
    socket.send(JSON.stringify({ time: now, self_id: NAPCAT_BOT.id, post_type: "meta_event", meta_event_type: "lifecycle", sub_type: "connect" }));
    socket.send(JSON.stringify({ time: now, self_id: NAPCAT_BOT.id, post_type: "meta_event", meta_event_type: "heartbeat", status: { online: true, good: true }, interval: 30000 }));
    socket.on("message", (raw) => {
      const frame = JSON.parse(String(raw)) as { action: string; params?: Record<string, unknown>; echo?: unknown };
      const params = frame.params ?? {};
      actions.push({ action: frame.action, params });
      const failure = failures.findIndex((f) => f.action === frame.action);
      const reply = failure >= 0 ? Promise.resolve({ retcode: failures.splice(failure, 1)[0]!.retcode, data: null, wording: "scripted failure" }) : answer(frame.action, params);
      void reply.then((r) => socket.send(JSON.stringify({ status: r.retcode === 0 ? "ok" : "failed", retcode: r.retcode, data: r.data, message: r.wording ?? "", wording: r.wording ?? "", echo: frame.echo })));
    });
  });

  const post = (event: Record<string, unknown>): void => {
    const frame = JSON.stringify({ time: Math.floor(Date.now() / 1000), self_id: NAPCAT_BOT.id, ...event });
    for (const socket of live) socket.send(frame);
  };

  return {
    url: `ws://127.0.0.1:${port}`,
    sent,
    actions,
    typing,
    connections: () => connections,
    liveSockets: () => live.size,
    userSays(message) {
      const messageId = nextId++;
      history.set(messageId, { userId: message.userId });
      const type = message.messageType ?? "private";
      const segments: NapcatSegment[] = [];
      if (message.address === "reply") {
        let quoted = message.replyToId;
        if (quoted === undefined) {
          quoted = nextId++;
          history.set(quoted, { userId: NAPCAT_BOT.id });
        }
        segments.push({ type: "reply", data: { id: String(quoted) } });
      }
      if (message.address === "mention") segments.push({ type: "at", data: { qq: String(NAPCAT_BOT.id), name: NAPCAT_BOT.nickname } });
      if (message.text) segments.push({ type: "text", data: { text: message.text } });
      const a = message.attachment;
      if (a && (a.as ?? "image") === "image") {
        segments.push({ type: "image", data: { file: a.name, url: serve(a.content, a.mimeType), file_size: String(a.declaredSize ?? a.content.length), summary: "" } });
      } else if (a) {
        const fileId = `/${randomBytes(8).toString("hex")}`;
        files.set(fileId, { name: a.name, content: a.content });
        segments.push({ type: "file", data: { file: a.name, file_id: fileId, file_size: String(a.declaredSize ?? a.content.length), ...(a.withUrl ? { url: serve(a.content, a.mimeType) } : {}) } });
      }
      post({
        post_type: "message",
        message_type: type,
        sub_type: type === "group" ? "normal" : "friend",
        message_id: messageId,
        user_id: message.userId,
        ...(type === "group" ? { group_id: message.groupId ?? NAPCAT_GROUP } : {}),
        message: message.format === "string" ? toCQ(segments) : segments,
        raw_message: toCQ(segments),
        font: 14,
        sender: { user_id: message.userId, nickname: message.nickname ?? `user${message.userId}`, ...(message.card ? { card: message.card } : {}) },
      });
      return messageId;
    },
    memberJoins(groupId, userId, card) {
      members.set(`${groupId}:${userId}`, card);
      post({ post_type: "notice", notice_type: "group_increase", sub_type: "approve", group_id: groupId, user_id: userId, operator_id: 0 });
    },
    failNext(action, count, retcode = 200) {
      for (let i = 0; i < count; i++) failures.push({ action, retcode });
    },
    dropConnection() {
      for (const socket of live) socket.terminate();
    },
    async close() {
      for (const socket of live) socket.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
