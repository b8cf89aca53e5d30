/**
 * A loopback fake of WeChat's iLink bot API and its media CDN, from the wire format the
 * reference client speaks: `getupdates` long polls (held until a message arrives), `sendmessage`
 * (refused with ret -2 under a context token it never issued to that user, with -14 under a
 * stale bot token), `getconfig` / `sendtyping`, `getuploadurl` and the CDN's AES-128-ECB
 * `upload` / `download`, `notifystart` / `notifystop`, and the QR login (`get_bot_qrcode`,
 * `get_qrcode_status` walking through scripted statuses). Everything the bot does is recorded.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export const WEIXIN_TOKEN = "fake-bot-token-0001@im.bot";
export const WEIXIN_BOT_ID = "fakebot0001@im.bot";

export interface WeixinSentMessage {
  to: string;
  clientId: string;
  contextToken: string;
  /** The user's message whose context token this send used. */
  replyTo?: string;
  text?: string;
  file?: { name: string; content: string; itemType: number };
}

export interface WeixinUserMessage {
  from: string;
  text?: string;
  image?: { content: string; keyShape?: "hex" | "base64" };
  file?: { name: string; content: string };
  voiceText?: string;
  quote?: { title?: string; text?: string };
  /** Leave out the context token (a message WeChat gives no reply right for). */
  noContext?: boolean;
}

export interface FakeWeixin {
  url: string;
  cdnUrl: string;
  sent: WeixinSentMessage[];
  typing: Array<{ user: string; status: number }>;
  /** Every request: endpoint, headers and JSON body. */
  requests: Array<{ endpoint: string; headers: IncomingMessage["headers"]; body: Record<string, unknown> }>;
  callsOf(endpoint: string): Array<{ headers: IncomingMessage["headers"]; body: Record<string, unknown> }>;
  /** Queues a user's message for the next getupdates; returns its message id. */
  userSays(message: WeixinUserMessage): string;
  /** A context token for `user` from an earlier conversation (what account.json keeps). */
  issueContext(user: string): string;
  /** The next `count` sendmessage calls answer HTTP `status`. */
  failSends(status: number, count: number): void;
  /** The bot token the API accepts (a login's token replaces it). */
  token: string;
  /** Statuses get_qrcode_status answers, in order (the last one repeats). */
  qrStatuses: Array<Record<string, unknown>>;
  waitingPolls(): number;
  /** Cuts every waiting long poll as a network drop would; returns how many. */
  dropPolls(): number;
  close(): Promise<void>;
}

function encrypt(data: Buffer, key: Buffer): Buffer {
  const cipher = createCipheriv("aes-128-ecb", key, null);
  return Buffer.concat([cipher.update(data), cipher.final()]);
}

function decrypt(data: Buffer, key: Buffer): Buffer {
  const decipher = createDecipheriv("aes-128-ecb", key, null);
  return Buffer.concat([decipher.update(data), decipher.final()]);
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startFakeWeixin(options: { pollHoldMs?: number } = {}): Promise<FakeWeixin> {
  const holdMs = options.pollHoldMs ?? 20_000;
  const queue: Array<Record<string, unknown>> = [];
  const waiting = new Set<{ res: ServerResponse; socket: Socket; flush: () => void }>();
  /** Context tokens issued: to whom, and with which of their messages ("" = an earlier one). */
  const contexts = new Map<string, { user: string; messageId: string }>();
  const cdn = new Map<string, Buffer>();
  const uploads = new Map<string, { key: Buffer; filekey: string }>();
  const uploaded = new Map<string, Buffer>();
  let nextId = 1000;
  let cursor = 0;
  let sendFailures: { status: number; count: number } = { status: 0, count: 0 };

  const fake: FakeWeixin = {
    url: "",
    cdnUrl: "",
    sent: [],
    typing: [],
    requests: [],
    token: WEIXIN_TOKEN,
    qrStatuses: [{ status: "wait" }, { status: "scaned" }, { status: "confirmed", bot_token: "fake-bot-token-from-qr@im.bot", ilink_bot_id: WEIXIN_BOT_ID, ilink_user_id: "owner@im.wechat" }],
    callsOf: (endpoint) => fake.requests.filter((r) => r.endpoint === endpoint),
    userSays(message) {
      const id = String(nextId++);
      const items: Array<Record<string, unknown>> = [];
      if (message.text !== undefined) {
        const item: Record<string, unknown> = { type: 1, text_item: { text: message.text } };
        if (message.quote) item.ref_msg = { ...(message.quote.title ? { title: message.quote.title } : {}), message_item: { type: 1, text_item: { text: message.quote.text ?? "" } } };
        items.push(item);
      }
      if (message.image) {
        const key = randomBytes(16);
        const param = `img-${id}`;
        cdn.set(param, encrypt(Buffer.from(message.image.content), key));
        const hex = message.image.keyShape !== "base64";
        items.push({ type: 2, image_item: { media: { encrypt_query_param: param, ...(hex ? {} : { aes_key: key.toString("base64") }) }, ...(hex ? { aeskey: key.toString("hex") } : {}) } });
      }
      if (message.file) {
        const key = randomBytes(16);
        const param = `file-${id}`;
        cdn.set(param, encrypt(Buffer.from(message.file.content), key));
        // Files carry the key as base64 of its hex spelling.
        items.push({ type: 4, file_item: { file_name: message.file.name, len: String(message.file.content.length), media: { encrypt_query_param: param, aes_key: Buffer.from(key.toString("hex")).toString("base64") } } });
      }
      if (message.voiceText) items.push({ type: 3, voice_item: { text: message.voiceText } });
      const contextToken = message.noContext ? "" : `ctx-${id}-${randomBytes(4).toString("hex")}`;
      if (contextToken) contexts.set(contextToken, { user: message.from, messageId: id });
      queue.push({ message_id: Number(id), from_user_id: message.from, to_user_id: WEIXIN_BOT_ID, create_time_ms: Date.now(), message_type: 1, message_state: 2, context_token: contextToken, item_list: items });
      for (const poll of waiting) poll.flush();
      return id;
    },
    issueContext(user) {
      const token = `ctx-earlier-${randomBytes(4).toString("hex")}`;
      contexts.set(token, { user, messageId: "" });
      return token;
    },
    failSends(status, count) {
      sendFailures = { status, count };
    },
    waitingPolls: () => waiting.size,
    dropPolls() {
      const n = waiting.size;
      for (const poll of [...waiting]) {
        waiting.delete(poll);
        poll.socket.destroy();
      }
      return n;
    },
    close: async () => {
      fake.dropPolls();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const json = (res: ServerResponse, body: unknown, status = 200, headers: Record<string, string> = {}): void => {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(body));
  };

  const stale = { ret: -14, errcode: -14, errmsg: "session timeout" };

  function recordSend(msg: Record<string, unknown>): Record<string, unknown> {
    const contextToken = String(msg.context_token ?? "");
    const to = String(msg.to_user_id ?? "");
    const issued = contexts.get(contextToken);
    if (!issued || issued.user !== to) return { ret: -2, errmsg: "context token invalid" };
    const item = ((msg.item_list as Array<Record<string, unknown>> | undefined) ?? [])[0] ?? {};
    const sent: WeixinSentMessage = { to, clientId: String(msg.client_id ?? ""), contextToken, ...(issued.messageId ? { replyTo: issued.messageId } : {}) };
    if (item.type === 1) sent.text = String((item.text_item as { text?: string }).text ?? "");
    else {
      const key = ({ 2: "image_item", 3: "voice_item", 4: "file_item", 5: "video_item" } as Record<number, string>)[Number(item.type)]!;
      const typed = item[key] as { file_name?: string; media: { encrypt_query_param: string; aes_key: string } };
      const hexKey = Buffer.from(typed.media.aes_key, "base64").toString("latin1");
      const bytes = decrypt(uploaded.get(typed.media.encrypt_query_param)!, Buffer.from(hexKey, "hex"));
      sent.file = { name: typed.file_name ?? key, content: bytes.toString("utf8"), itemType: Number(item.type) };
    }
    if (fake.sent.some((s) => s.clientId === sent.clientId)) return { ret: 0 };
    fake.sent.push(sent);
    return { ret: 0 };
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://fake");
      const raw = await readBody(req);
      if (url.pathname === "/c2c/upload") {
        const up = uploads.get(url.searchParams.get("encrypted_query_param") ?? "");
        if (!up || up.filekey !== url.searchParams.get("filekey")) return json(res, { error: "unknown upload" }, 400);
        const param = `dl-${randomBytes(6).toString("hex")}`;
        uploaded.set(param, raw);
        decrypt(raw, up.key); // refuses bytes not encrypted with the announced key
        res.writeHead(200, { "x-encrypted-param": param });
        return res.end();
      }
      if (url.pathname === "/c2c/download") {
        const bytes = cdn.get(url.searchParams.get("encrypted_query_param") ?? "");
        if (!bytes) return json(res, { error: "not found" }, 404);
        res.writeHead(200, { "content-type": "application/octet-stream" });
        return res.end(bytes);
      }
      const endpoint = url.pathname.replace(/^\/ilink\/bot\//, "");
      const body = raw.length ? (JSON.parse(raw.toString("utf8")) as Record<string, unknown>) : Object.fromEntries(url.searchParams);
      fake.requests.push({ endpoint, headers: req.headers, body });
      if (endpoint === "get_bot_qrcode") return json(res, { ret: 0, qrcode: "fake-qr-0001", qrcode_img_content: "https://liteapp.weixin.qq.com/q/fake-qr-0001?bot_type=3" });
      if (endpoint === "get_qrcode_status") {
        const count = fake.callsOf("get_qrcode_status").length;
        const status = fake.qrStatuses[Math.min(count - 1, fake.qrStatuses.length - 1)]!;
        if (status.status === "confirmed") fake.token = String(status.bot_token);
        return json(res, { ret: 0, ...status, ...(status.status === "confirmed" && !status.baseurl ? { baseurl: fake.url } : {}) });
      }
      if (req.headers.authorization !== `Bearer ${fake.token}` || req.headers.authorizationtype !== "ilink_bot_token") return json(res, stale);
      switch (endpoint) {
        case "getupdates": {
          const answer = (): void => {
            const msgs = queue.splice(0);
            json(res, { ret: 0, msgs, get_updates_buf: msgs.length ? `cursor-${++cursor}` : String(body.get_updates_buf ?? "") });
          };
          if (queue.length) return answer();
          const poll = {
            res,
            socket: req.socket,
            flush: () => {
              waiting.delete(poll);
              clearTimeout(timer);
              answer();
            },
          };
          const timer = setTimeout(poll.flush, holdMs);
          waiting.add(poll);
          res.on("close", () => (waiting.delete(poll), clearTimeout(timer)));
          return;
        }
        case "sendmessage": {
          if (sendFailures.count > 0) {
            sendFailures.count--;
            return json(res, { error: "upstream" }, sendFailures.status);
          }
          return json(res, recordSend((body.msg ?? {}) as Record<string, unknown>));
        }
        case "getconfig":
          return json(res, { ret: 0, typing_ticket: `ticket-${String(body.ilink_user_id)}` });
        case "sendtyping":
          fake.typing.push({ user: String(body.ilink_user_id), status: Number(body.status) });
          return json(res, { ret: 0 });
        case "getuploadurl": {
          const param = `up-${randomBytes(6).toString("hex")}`;
          uploads.set(param, { key: Buffer.from(String(body.aeskey), "hex"), filekey: String(body.filekey) });
          return json(res, { ret: 0, upload_param: param });
        }
        case "msg/notifystart":
        case "msg/notifystop":
          return json(res, { ret: 0 });
        default:
          return json(res, { ret: -1, errmsg: `unknown endpoint ${endpoint}` }, 404);
      }
    })().catch((error: unknown) => json(res, { error: String(error) }, 500));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}`;
  fake.cdnUrl = `${fake.url}/c2c`;
  return fake;
}
