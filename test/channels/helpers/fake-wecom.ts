/**
 * A loopback fake of WeCom's AI-bot long connection, from its documented wire format: the bot
 * subscribes (`aibot_subscribe` with bot_id + secret → `{errcode: 0}`), pings (`ping`), gets
 * messages as `aibot_msg_callback` frames and events as `aibot_event_callback`, answers with
 * `aibot_respond_msg` (stream replies) / `aibot_respond_welcome_msg` on the callback's req_id,
 * sends proactively with `aibot_send_msg`, and uploads in chunks (`aibot_upload_media_init`,
 * `_chunk`, `_finish`). Every command is acknowledged with `{headers: {req_id}, errcode}`.
 * Files users send are served over HTTP, AES-256-CBC encrypted with the message's `aeskey`
 * (IV = the key's first 16 bytes, PKCS#7 padding to 32 bytes). Everything is recorded.
 */
import { createCipheriv, randomBytes, randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";

export const WECOM_BOT_ID = "aibfakebot0001";
export const WECOM_SECRET = "fake-wecom-secret";
export const WECOM_GROUP = "wrfakegroup0001";

export interface WecomUser {
  id: string;
  username: string;
}

export interface WecomSentMessage {
  chatId: string;
  via: "reply" | "send" | "welcome";
  msgtype: string;
  /** The message answered (the callback's msgid), for replies. */
  replyTo?: string;
  text: string;
  /** Later contents of the same stream id. */
  edits: string[];
  streamId?: string;
  finished?: boolean;
  files: Array<{ name: string; content: string }>;
}

export interface WecomPush {
  from: WecomUser;
  text?: string;
  group?: boolean;
  /** The text starts with an @-mention of the bot (as WeCom writes it). */
  atBot?: boolean;
  /** The message quotes an earlier message. */
  quote?: boolean;
  attachment?: { name: string; contentType: string; content: string };
  extra?: Record<string, unknown>;
}

export interface FakeWecom {
  url: string;
  wsUrl: string;
  messages: WecomSentMessage[];
  /** Every frame the bot sent. */
  frames: Array<{ cmd?: string; headers?: { req_id?: string }; body?: Record<string, unknown> }>;
  /** Subscriptions accepted so far. */
  subscriptions(): number;
  liveSockets(): number;
  pings(): number;
  /** Pushes a message callback (queued until a bot is subscribed); returns its msgid. */
  pushMessage(push: WecomPush): string;
  /** Pushes an enter_chat event for the user. */
  enterChat(user: WecomUser): string;
  /** The next `count` reply / send commands are refused with `errcode` (-1: system busy). */
  failNextSends(count: number, errcode?: number): void;
  dropConnections(): void;
  close(): Promise<void>;
}

function encrypt(content: string, key: Buffer): Buffer {
  const plain = Buffer.from(content, "utf8");
  const pad = 32 - (plain.length % 32);
  const cipher = createCipheriv("aes-256-cbc", key, key.subarray(0, 16));
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(Buffer.concat([plain, Buffer.alloc(pad, pad)])), cipher.final()]);
}

export async function startFakeWecom(): Promise<FakeWecom> {
  const messages: WecomSentMessage[] = [];
  const frames: FakeWecom["frames"] = [];
  const files = new Map<string, { body: Buffer; name: string }>();
  const callbacks = new Map<string, { msgId: string; chatId: string }>();
  const uploads = new Map<string, { name: string; chunks: string[] }>();
  const media = new Map<string, { name: string; content: string }>();
  const live = new Set<WebSocket>();
  const pending: string[] = [];
  let failures: number[] = [];
  let subscriptions = 0;
  let pings = 0;
  let seq = 0;

  const server: Server = createServer((req, res) => {
    const file = files.get(new URL(req.url ?? "/", "http://x").pathname.slice(1));
    if (!file) return void res.writeHead(404).end();
    res.writeHead(200, { "content-type": "application/octet-stream", "content-disposition": `attachment; filename="${file.name}"` }).end(file.body);
  });
  const wss = new WebSocketServer({ server });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  wss.on("connection", (ws) => {
    let subscribed = false;
    ws.on("close", () => live.delete(ws));
    ws.on("message", (raw) => {
      const frame = JSON.parse(String(raw)) as { cmd?: string; headers?: { req_id?: string }; body?: Record<string, unknown> };
      frames.push(frame);
      const reqId = frame.headers?.req_id ?? "";
      const ack = (errcode = 0, body?: Record<string, unknown>): void =>
        ws.send(JSON.stringify({ headers: { req_id: reqId }, errcode, errmsg: errcode === 0 ? "ok" : "system busy", ...(body ? { body } : {}) }));
      const body = frame.body ?? {};
      switch (frame.cmd) {
        case "aibot_subscribe":
          if (body.bot_id !== WECOM_BOT_ID || body.secret !== WECOM_SECRET) {
            ws.send(JSON.stringify({ headers: { req_id: reqId }, errcode: 40058, errmsg: "invalid bot_id or secret" }));
            return;
          }
          subscribed = true;
          subscriptions++;
          live.add(ws);
          ack();
          for (const data of pending.splice(0)) ws.send(data);
          return;
        case "ping":
          pings++;
          return ack();
        case "aibot_upload_media_init": {
          const uploadId = `upload-${++seq}`;
          uploads.set(uploadId, { name: String(body.filename), chunks: [] });
          return ack(0, { upload_id: uploadId });
        }
        case "aibot_upload_media_chunk":
          uploads.get(String(body.upload_id))!.chunks[Number(body.chunk_index)] = String(body.base64_data);
          return ack();
        case "aibot_upload_media_finish": {
          const upload = uploads.get(String(body.upload_id))!;
          const mediaId = `media-${++seq}`;
          media.set(mediaId, { name: upload.name, content: Buffer.concat(upload.chunks.map((c) => Buffer.from(c, "base64"))).toString("utf8") });
          return ack(0, { type: "file", media_id: mediaId, created_at: String(Date.now()) });
        }
      }
      if (!subscribed) return ack(40001);
      if (frame.cmd === "aibot_respond_msg" || frame.cmd === "aibot_send_msg" || frame.cmd === "aibot_respond_welcome_msg") {
        const failure = failures.shift();
        if (failure !== undefined) return ack(failure);
        const callback = callbacks.get(reqId);
        const msgtype = String(body.msgtype);
        const via = frame.cmd === "aibot_send_msg" ? "send" : frame.cmd === "aibot_respond_welcome_msg" ? "welcome" : "reply";
        const chatId = via === "send" ? String(body.chatid) : (callback?.chatId ?? "?");
        const stream = body.stream as { id?: string; content?: string; finish?: boolean } | undefined;
        const mediaRef = (body[msgtype] as { media_id?: string } | undefined)?.media_id;
        const uploaded = mediaRef ? media.get(mediaRef) : undefined;
        const earlier = stream?.id ? messages.find((m) => m.streamId === stream.id) : undefined;
        if (earlier && stream) {
          earlier.edits.push(stream.content ?? "");
          earlier.text = stream.content ?? "";
          earlier.finished = stream.finish === true;
          return ack();
        }
        const text =
          stream?.content ?? (body.markdown as { content?: string } | undefined)?.content ?? (body.text as { content?: string } | undefined)?.content ?? "";
        messages.push({
          chatId,
          via,
          msgtype,
          ...(via === "reply" && callback ? { replyTo: callback.msgId } : {}),
          text,
          edits: [],
          ...(stream?.id ? { streamId: stream.id, finished: stream.finish === true } : {}),
          files: uploaded ? [uploaded] : [],
        });
        return ack();
      }
      ack(40008);
    });
  });

  function deliver(frame: Record<string, unknown>): void {
    const text = JSON.stringify(frame);
    if (live.size === 0) pending.push(text);
    for (const ws of live) ws.send(text);
  }

  function pushMessage(push: WecomPush): string {
    const msgId = `msg-${++seq}`;
    const reqId = `req-${randomUUID()}`;
    const group = push.group === true;
    const chatId = group ? WECOM_GROUP : push.from.id;
    callbacks.set(reqId, { msgId, chatId });
    const body: Record<string, unknown> = {
      msgid: msgId,
      aibotid: WECOM_BOT_ID,
      chattype: group ? "group" : "single",
      from: { userid: push.from.id },
      create_time: Date.now(),
      msgtype: "text",
    };
    if (group) body.chatid = WECOM_GROUP;
    const text = push.text !== undefined ? (push.atBot ? `@nanobot ${push.text}` : push.text) : undefined;
    if (text !== undefined) body.text = { content: text };
    if (push.quote) body.quote = { msgtype: "text", text: { content: "earlier answer" } };
    if (push.attachment) {
      const key = randomBytes(32);
      const fileKey = `f${++seq}`;
      files.set(fileKey, { body: encrypt(push.attachment.content, key), name: push.attachment.name });
      const ref = { url: `${url}/${fileKey}`, aeskey: key.toString("base64") };
      if (push.attachment.contentType.startsWith("image/")) {
        const items: unknown[] = [];
        if (text) items.push({ msgtype: "text", text: { content: text } });
        items.push({ msgtype: "image", image: ref });
        body.msgtype = "mixed";
        body.mixed = { msg_item: items };
        delete body.text;
      } else {
        body.msgtype = "file";
        body.file = { ...ref, name: push.attachment.name };
        delete body.text;
      }
    }
    Object.assign(body, push.extra ?? {});
    deliver({ cmd: "aibot_msg_callback", headers: { req_id: reqId }, body });
    return msgId;
  }

  return {
    url,
    wsUrl: `ws://127.0.0.1:${port}`,
    messages,
    frames,
    subscriptions: () => subscriptions,
    liveSockets: () => live.size,
    pings: () => pings,
    pushMessage,
    enterChat(user) {
      const reqId = `req-${randomUUID()}`;
      callbacks.set(reqId, { msgId: `event-${++seq}`, chatId: user.id });
      deliver({
        cmd: "aibot_event_callback",
        headers: { req_id: reqId },
        body: { msgid: `event-${seq}`, aibotid: WECOM_BOT_ID, chattype: "single", from: { userid: user.id }, msgtype: "event", event: { eventtype: "enter_chat" } },
      });
      return reqId;
    },
    failNextSends(count, errcode = -1) {
      failures = [...failures, ...Array.from({ length: count }, () => errcode)];
    },
    dropConnections() {
      for (const ws of live) ws.terminate();
    },
    async close() {
      for (const ws of wss.clients) ws.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
