/**
 * A loopback fake of the WhatsApp Cloud API, from Meta's documented wire format: the Graph API
 * (`POST /{version}/{phone-number-id}/messages` for text, media and typing/read, multipart
 * `POST /{version}/{phone-number-id}/media`, `GET /{version}/{media-id}` → a download URL that
 * needs the bearer token) and the platform side of the webhook: signed (`X-Hub-Signature-256`)
 * `whatsapp_business_account` events POSTed to the channel over a keep-alive connection, and the
 * `hub.challenge` subscription check. Everything the bot does is recorded.
 */
import { createHmac } from "node:crypto";
import { Agent, createServer, request } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export const WA_TOKEN = "fake-whatsapp-access-token";
export const WA_PHONE_NUMBER_ID = "106540352242922";
export const WA_BUSINESS_NUMBER = "15550009999";
export const WA_APP_SECRET = "fake-app-secret";
export const WA_VERIFY_TOKEN = "fake-verify-token";
export const WA_GROUP = "120363025246125486";
const VERSION = "v21.0";

export interface WhatsAppSent {
  id: string;
  to: string;
  recipientType: string;
  text: string;
  replyTo?: string;
  files: Array<{ name: string; content: string; mimeType: string }>;
}

export interface WhatsAppPush {
  from: string;
  name: string;
  text?: string;
  groupId?: string;
  /** Reply to (quote) this message id. */
  replyTo?: string;
  media?: { type: "image" | "document" | "audio" | "video"; name: string; mimeType: string; content: string; caption?: string };
}

export interface FakeWhatsApp {
  apiRoot: string;
  messages: WhatsAppSent[];
  /** Chat ids a typing indicator was shown in. */
  typing: string[];
  /** Every Graph request (method + path). */
  requests: Array<{ method: string; path: string; body: unknown }>;
  /** Where the platform delivers events (set once the channel listens). */
  setWebhook(url: string): void;
  /** Delivers one message event; resolves to its wamid once the webhook answered 200. */
  push(message: WhatsAppPush): Promise<string>;
  /** Delivers a status update (sent/delivered/read) for one of the bot's messages. */
  pushStatus(messageId: string, status: "sent" | "delivered" | "read"): Promise<void>;
  /** POSTs a raw body with the given signature header; resolves to the webhook's status. */
  postRaw(body: string, signature: string | undefined): Promise<number>;
  /** Meta's subscription check; resolves to status and body. */
  verify(token: string, challenge: string): Promise<{ status: number; body: string }>;
  failNext(what: "messages" | "media", status: number, count?: number, code?: number): void;
  /** TCP connections opened to the webhook so far. */
  connections(): number;
  /** Cuts the keep-alive connections to the webhook (a network drop). */
  dropConnections(): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

export async function startFakeWhatsApp(): Promise<FakeWhatsApp> {
  const messages: WhatsAppSent[] = [];
  const typing: string[] = [];
  const requests: FakeWhatsApp["requests"] = [];
  const uploads = new Map<string, { name: string; content: Buffer; mimeType: string }>();
  /** Pushed message id → chat (for typing indicators). */
  const chats = new Map<string, string>();
  const failures: Array<{ what: string; status: number; code?: number }> = [];
  let nextId = 1;
  let webhook: URL | undefined;
  let connections = 0;
  const sockets = new Set<Socket>();
  let agent = new Agent({ keepAlive: true, maxSockets: 1 });

  const fail = (what: string, res: ServerResponse): boolean => {
    const i = failures.findIndex((f) => f.what === what);
    if (i < 0) return false;
    const { status, code } = failures.splice(i, 1)[0]!;
    send(res, status, { error: { message: "(#131000) Something went wrong", type: "OAuthException", code: code ?? 131000, fbtrace_id: "fake" } });
    return true;
  };

  const onGraph = async (req: IncomingMessage, res: ServerResponse, path: string): Promise<void> => {
    const raw = await new Promise<Buffer>((resolve) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => resolve(Buffer.concat(chunks)));
    });
    if (req.headers.authorization !== `Bearer ${WA_TOKEN}`) return send(res, 401, { error: { message: "Invalid OAuth access token.", type: "OAuthException", code: 190 } });
    const parts = path.split("/").filter(Boolean);
    if (parts[0] === "media-download") {
      const file = uploads.get(parts[1] ?? "");
      if (!file) return send(res, 404, {});
      res.writeHead(200, { "content-type": file.mimeType }).end(file.content);
      return;
    }
    if (parts[0] !== VERSION) return send(res, 404, {});
    if (req.method === "GET" && parts.length === 2) {
      const file = uploads.get(parts[1]!);
      if (!file) return send(res, 404, { error: { message: "media not found", code: 100 } });
      const host = req.headers.host ?? "127.0.0.1";
      return send(res, 200, { messaging_product: "whatsapp", id: parts[1], url: `http://${host}/media-download/${parts[1]}`, mime_type: file.mimeType, file_size: file.content.length });
    }
    if (req.method === "POST" && parts[1] === WA_PHONE_NUMBER_ID && parts[2] === "media") {
      requests.push({ method: "POST", path, body: "(multipart)" });
      if (fail("media", res)) return;
      const form = await new Response(raw, { headers: { "content-type": req.headers["content-type"] ?? "" } }).formData();
      const file = form.get("file");
      if (form.get("messaging_product") !== "whatsapp" || !(file instanceof Blob)) return send(res, 400, { error: { message: "file and messaging_product required", code: 100 } });
      const id = `media-${nextId++}`;
      uploads.set(id, { name: (file as File).name, content: Buffer.from(await file.arrayBuffer()), mimeType: String(form.get("type") ?? file.type) });
      return send(res, 200, { id });
    }
    if (req.method === "POST" && parts[1] === WA_PHONE_NUMBER_ID && parts[2] === "messages") {
      const body = JSON.parse(raw.toString("utf8")) as Record<string, unknown>;
      requests.push({ method: "POST", path, body });
      if (body.messaging_product !== "whatsapp") return send(res, 400, { error: { message: "messaging_product is required", code: 100 } });
      if (body.status === "read") {
        const chat = chats.get(String(body.message_id));
        if (!chat) return send(res, 400, { error: { message: "Invalid message_id", code: 100 } });
        if (body.typing_indicator) typing.push(chat);
        return send(res, 200, { success: true });
      }
      if (fail("messages", res)) return;
      const type = String(body.type);
      const sent: WhatsAppSent = { id: `wamid.OUT${nextId++}`, to: String(body.to), recipientType: String(body.recipient_type ?? "individual"), text: "", files: [] };
      if (type === "text") sent.text = String((body.text as { body?: unknown }).body ?? "");
      else {
        const media = body[type] as { id?: string; caption?: string; filename?: string } | undefined;
        const file = uploads.get(media?.id ?? "");
        if (!file) return send(res, 400, { error: { message: "media id not found", code: 131053 } });
        sent.text = media?.caption ?? "";
        sent.files.push({ name: media?.filename ?? file.name, content: file.content.toString("utf8"), mimeType: file.mimeType });
      }
      const context = body.context as { message_id?: string } | undefined;
      if (context?.message_id) sent.replyTo = context.message_id;
      messages.push(sent);
      return send(res, 200, { messaging_product: "whatsapp", contacts: [{ input: sent.to, wa_id: sent.to }], messages: [{ id: sent.id }] });
    }
    send(res, 404, {});
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    onGraph(req, res, path).catch((error: unknown) => send(res, 500, { error: { message: String(error) } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const apiRoot = `http://127.0.0.1:${port}`;

  const deliver = (method: string, path: string, body: string | undefined, headers: Record<string, string>): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      if (!webhook) return reject(new Error("no webhook set"));
      const req = request({ host: webhook.hostname, port: webhook.port, path, method, agent, headers }, (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on("socket", (socket) => {
        if (sockets.has(socket)) return;
        sockets.add(socket);
        connections++;
        socket.on("close", () => sockets.delete(socket));
      });
      req.on("error", reject);
      req.end(body);
    });

  const sign = (body: string): string => `sha256=${createHmac("sha256", WA_APP_SECRET).update(body).digest("hex")}`;

  return {
    apiRoot,
    messages,
    typing,
    requests,
    setWebhook(url) {
      webhook = new URL(url);
    },
    async push(message) {
      const id = `wamid.IN${nextId++}`;
      const chat = message.groupId ?? message.from;
      chats.set(id, chat);
      const event: Record<string, unknown> = { from: message.from, id, timestamp: String(Math.floor(Date.now() / 1000)) };
      if (message.groupId) event.group_id = message.groupId;
      if (message.replyTo) event.context = { from: WA_BUSINESS_NUMBER, id: message.replyTo };
      if (message.media) {
        const mediaId = `media-${nextId++}`;
        uploads.set(mediaId, { name: message.media.name, content: Buffer.from(message.media.content), mimeType: message.media.mimeType });
        event.type = message.media.type;
        event[message.media.type] = {
          id: mediaId,
          mime_type: message.media.mimeType,
          sha256: "fake",
          ...(message.media.type === "document" ? { filename: message.media.name } : {}),
          ...(message.media.caption ?? message.text ? { caption: message.media.caption ?? message.text } : {}),
        };
      } else {
        event.type = "text";
        event.text = { body: message.text ?? "" };
      }
      const payload = {
        object: "whatsapp_business_account",
        entry: [
          {
            id: "102290129340398",
            changes: [
              {
                field: "messages",
                value: {
                  messaging_product: "whatsapp",
                  metadata: { display_phone_number: WA_BUSINESS_NUMBER, phone_number_id: WA_PHONE_NUMBER_ID },
                  contacts: [{ profile: { name: message.name }, wa_id: message.from }],
                  messages: [event],
                },
              },
            ],
          },
        ],
      };
      const body = JSON.stringify(payload);
      const answer = await deliver("POST", webhook!.pathname, body, { "content-type": "application/json", "x-hub-signature-256": sign(body) });
      if (answer.status !== 200) throw new Error(`webhook answered ${answer.status}`);
      return id;
    },
    async pushStatus(messageId, status) {
      const value = {
        messaging_product: "whatsapp",
        metadata: { display_phone_number: WA_BUSINESS_NUMBER, phone_number_id: WA_PHONE_NUMBER_ID },
        statuses: [{ id: messageId, status, timestamp: String(Math.floor(Date.now() / 1000)), recipient_id: "0" }],
      };
      const body = JSON.stringify({ object: "whatsapp_business_account", entry: [{ id: "102290129340398", changes: [{ field: "messages", value }] }] });
      const answer = await deliver("POST", webhook!.pathname, body, { "content-type": "application/json", "x-hub-signature-256": sign(body) });
      if (answer.status !== 200) throw new Error(`webhook answered ${answer.status}`);
    },
    async postRaw(body, signature) {
      const headers: Record<string, string> = { "content-type": "application/json" };
      if (signature !== undefined) headers["x-hub-signature-256"] = signature;
      return (await deliver("POST", webhook!.pathname, body, headers)).status;
    },
    verify(token, challenge) {
      const query = new URLSearchParams({ "hub.mode": "subscribe", "hub.verify_token": token, "hub.challenge": challenge });
      return deliver("GET", `${webhook!.pathname}?${query.toString()}`, undefined, {});
    },
    failNext(what, status, count = 1, code) {
      for (let i = 0; i < count; i++) failures.push({ what, status, ...(code !== undefined ? { code } : {}) });
    },
    connections: () => connections,
    dropConnections() {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      agent.destroy();
      agent = new Agent({ keepAlive: true, maxSockets: 1 });
    },
    async close() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
