/**
 * A loopback fake of a signal-cli daemon in HTTP mode (`signal-cli daemon --http`), from
 * signal-cli's documented wire format: `GET /api/v1/check`, JSON-RPC 2.0 at `POST /api/v1/rpc`
 * (send with recipient/groupId, message, quoteTimestamp/quoteAuthor and data-URI attachments;
 * sendTyping; updateConfiguration; startLink/finishLink for device linking) and the
 * Server-Sent Events stream `GET /api/v1/events` (`event:receive` with `{ envelope, account }`).
 * Received attachments are written into an attachments folder as signal-cli stores them.
 * Everything the bot does is recorded.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

export const SIGNAL_ACCOUNT = "+15550000001";
export const SIGNAL_ACCOUNT_UUID = "a0a0a0a0-0000-4000-8000-000000000001";
export const SIGNAL_GROUP = "R3JvdXAtZmFrZS1zaWduYWwtMDAwMQ==";

export interface SignalUser {
  /** Absent when the user hides their number (the daemon then knows only the UUID). */
  number?: string;
  uuid: string;
  name: string;
}

export interface SignalSent {
  timestamp: number;
  /** The DM recipient or the group id. */
  chatId: string;
  text: string;
  quote?: { timestamp: number; author: string };
  files: Array<{ name: string; content: string; mimeType: string }>;
}

export interface RpcCall {
  method: string;
  params: Record<string, unknown>;
}

export interface SignalPush {
  from: SignalUser;
  text: string;
  groupId?: string;
  /** Mention the bot account at the start of the text (the text gets the U+FFFC placeholder). */
  mentionBot?: boolean;
  /** Quote (reply to) this earlier message. */
  quote?: { timestamp: number; author: string };
  attachment?: { name: string; contentType: string; content: string };
}

export interface FakeSignalOptions {
  attachmentsDir: string;
  /** What finishLink answers (the linked account's number); undefined = a link error. */
  linkedNumber?: string;
}

export interface FakeSignal {
  url: string;
  host: string;
  port: number;
  calls: RpcCall[];
  messages: SignalSent[];
  /** Chat ids sendTyping was called for. */
  typing: string[];
  /** How many event streams were opened so far. */
  sessions(): number;
  liveStreams(): number;
  /** Delivers a message to the open event streams; resolves to its timestamp (Signal's message id). */
  push(message: SignalPush): Promise<number>;
  /** Sends a raw `receive` notification. */
  pushRaw(params: Record<string, unknown>): void;
  failNext(method: string, status: number, count?: number): void;
  /** Cuts every open event stream (as a network drop). */
  dropStreams(): void;
  close(): Promise<void>;
}

function decodeDataUri(uri: string): { name: string; content: string; mimeType: string } {
  const match = /^data:([^;,]+)((?:;[^;,]+)*);base64,(.*)$/s.exec(uri);
  if (!match) throw new Error(`not a data URI: ${uri.slice(0, 40)}`);
  const name = /;filename=([^;]+)/.exec(match[2] ?? "")?.[1] ?? "file";
  return { name, mimeType: match[1]!, content: Buffer.from(match[3]!, "base64").toString("utf8") };
}

export async function startFakeSignal(options: FakeSignalOptions): Promise<FakeSignal> {
  const calls: RpcCall[] = [];
  const messages: SignalSent[] = [];
  const typing: string[] = [];
  const streams = new Set<ServerResponse>();
  const failures: Array<{ method: string; status: number }> = [];
  let sessions = 0;
  let clock = 1_700_000_000_000;
  let nextAttachment = 1;
  const linkUri = "sgnl://linkdevice?uuid=fake-link-uuid-0001&pub_key=BfakePublicKey0001";

  const rpcResult = (method: string, params: Record<string, unknown>): { result?: unknown; error?: { code: number; message: string } } => {
    switch (method) {
      case "send": {
        const groupId = typeof params.groupId === "string" ? params.groupId : undefined;
        const recipients = Array.isArray(params.recipient) ? params.recipient.map(String) : typeof params.recipient === "string" ? [params.recipient] : [];
        if (!groupId && recipients.length === 0) return { error: { code: -32602, message: "No recipients given" } };
        const unknown = recipients.find((r) => r.startsWith("+1000"));
        if (unknown) return { error: { code: -1, message: `Failed to send message: ${unknown}: Unregistered user` } };
        const timestamp = ++clock;
        const sent: SignalSent = {
          timestamp,
          chatId: groupId ?? recipients[0]!,
          text: typeof params.message === "string" ? params.message : "",
          files: Array.isArray(params.attachments) ? params.attachments.map((a) => decodeDataUri(String(a))) : [],
        };
        if (typeof params.quoteTimestamp === "number") sent.quote = { timestamp: params.quoteTimestamp, author: String(params.quoteAuthor) };
        messages.push(sent);
        return { result: { timestamp, results: [{ type: "SUCCESS" }] } };
      }
      case "sendTyping": {
        const groupId = typeof params.groupId === "string" ? params.groupId : undefined;
        const recipients = Array.isArray(params.recipient) ? params.recipient.map(String) : [];
        if (params.stop !== true) typing.push(groupId ?? recipients[0] ?? "?");
        return { result: {} };
      }
      case "updateConfiguration":
      case "sendReceipt":
        return { result: {} };
      case "startLink":
        return { result: { deviceLinkUri: linkUri } };
      case "finishLink":
        if (params.deviceLinkUri !== linkUri) return { error: { code: -1, message: "Unknown device link uri." } };
        if (!options.linkedNumber) return { error: { code: -1, message: "Link request timed out, please try again." } };
        return { result: { number: options.linkedNumber } };
      default:
        return { error: { code: -32601, message: `Method not implemented: ${method}` } };
    }
  };

  const onRpc = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id?: unknown; method: string; params?: Record<string, unknown> };
    const params = request.params ?? {};
    calls.push({ method: request.method, params });
    const failure = failures.findIndex((f) => f.method === request.method);
    if (failure >= 0) {
      const { status } = failures.splice(failure, 1)[0]!;
      res.writeHead(status, { "content-type": "text/plain" }).end("daemon failure");
      return;
    }
    // finishLink waits for the phone to scan the code; the fake answers after a moment.
    if (request.method === "finishLink") await new Promise((r) => setTimeout(r, 100));
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ jsonrpc: "2.0", id: request.id, ...rpcResult(request.method, params) }));
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/api/v1/check") return void res.writeHead(200).end();
    if (req.method === "POST" && path === "/api/v1/rpc") {
      onRpc(req, res).catch((error: unknown) => res.writeHead(500).end(String(error)));
      return;
    }
    if (req.method === "GET" && path === "/api/v1/events") {
      sessions++;
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      res.write(":\n\n");
      streams.add(res);
      res.on("close", () => streams.delete(res));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  const emit = (params: Record<string, unknown>): void => {
    const frame = `event:receive\ndata:${JSON.stringify(params)}\n\n`;
    for (const res of streams) res.write(frame);
  };
  // Pushes are written in order (an attachment is stored before its event goes out).
  let pending: Promise<void> = Promise.resolve();

  return {
    url: `http://127.0.0.1:${port}`,
    host: "127.0.0.1",
    port,
    calls,
    messages,
    typing,
    sessions: () => sessions,
    liveStreams: () => streams.size,
    async push(message) {
      const timestamp = ++clock;
      const text = message.mentionBot ? `\ufffc ${message.text}` : message.text;
      const data: Record<string, unknown> = { timestamp, message: text, expiresInSeconds: 0, viewOnce: false };
      if (message.mentionBot) data.mentions = [{ name: SIGNAL_ACCOUNT, number: SIGNAL_ACCOUNT, uuid: SIGNAL_ACCOUNT_UUID, start: 0, length: 1 }];
      if (message.groupId) data.groupInfo = { groupId: message.groupId, groupName: "Fake group", revision: 1, type: "DELIVER" };
      if (message.quote) data.quote = { id: message.quote.timestamp, author: message.quote.author, authorNumber: message.quote.author, text: "", attachments: [] };
      const write = async (): Promise<void> => {
        if (message.attachment) {
          const id = `att${nextAttachment++}${message.attachment.name.slice(message.attachment.name.lastIndexOf("."))}`;
          await mkdir(options.attachmentsDir, { recursive: true });
          await writeFile(join(options.attachmentsDir, id), message.attachment.content);
          data.attachments = [{ contentType: message.attachment.contentType, filename: message.attachment.name, id, size: message.attachment.content.length }];
        }
        emit({
          envelope: {
            source: message.from.number ?? message.from.uuid,
            sourceNumber: message.from.number ?? null,
            sourceUuid: message.from.uuid,
            sourceName: message.from.name,
            sourceDevice: 1,
            timestamp,
            dataMessage: data,
          },
          account: SIGNAL_ACCOUNT,
        });
      };
      pending = pending.then(write);
      await pending;
      return timestamp;
    },
    pushRaw: (params) => {
      pending = pending.then(() => emit(params));
    },
    failNext(method, status, count = 1) {
      for (let i = 0; i < count; i++) failures.push({ method, status });
    },
    dropStreams() {
      for (const res of streams) res.socket?.destroy();
      streams.clear();
    },
    async close() {
      for (const res of streams) res.end();
      streams.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
