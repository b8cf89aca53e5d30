/**
 * A loopback fake of the Discord platform, from Discord's documented wire format (API v10):
 * REST under `/api/v10` (gateway/bot, channel messages POST/PATCH with JSON or multipart
 * uploads, typing, own reactions), attachment downloads, and the Gateway WebSocket (HELLO,
 * IDENTIFY → READY + GUILD_CREATE, HEARTBEAT → ACK, MESSAGE_CREATE dispatches, RESUME with a
 * replay of missed events → RESUMED). Everything the bot does is recorded.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";

export const DISCORD_TOKEN = "fake-discord-bot-token";
export const DISCORD_BOT = { id: "1000000000000000001", username: "nanobot" };
export const DISCORD_GUILD = "4000000000000000001";
export const DISCORD_GROUP_CHANNEL = "5000000000000000001";

export interface DiscordUser {
  id: string;
  username: string;
}

export interface DiscordSentMessage {
  id: string;
  channelId: string;
  content: string;
  edits: string[];
  /** `message_reference.message_id` of the send. */
  replyTo?: string;
  files: Array<{ name: string; content: string }>;
}

export interface DiscordRequest {
  method: string;
  path: string;
  body: unknown;
}

export interface GatewayPayload {
  op: number;
  d: unknown;
  s?: number | null;
  t?: string | null;
}

export interface DispatchOptions {
  author: DiscordUser;
  content: string;
  /** A guild channel message (else a DM in the author's DM channel). */
  guild?: boolean;
  /** Users mentioned (`<@id>` is put in the text by the caller). */
  mentions?: DiscordUser[];
  /** Reply to this earlier message of the bot's. */
  replyToBotMessage?: string;
  attachment?: { name: string; contentType: string; content: string };
  /** Another channel (for allowChannels tests). */
  channelId?: string;
}

export interface FakeDiscord {
  url: string;
  /** What `rest.api` points at. */
  apiRoot: string;
  messages: DiscordSentMessage[];
  requests: DiscordRequest[];
  /** Payloads the client sent on the gateway. */
  gatewayOps: GatewayPayload[];
  reactions: Array<{ action: "add" | "remove"; channelId: string; messageId: string; emoji: string }>;
  typing: string[];
  /** IDENTIFYs + RESUMEs so far. */
  sessions(): number;
  dmChannel(user: DiscordUser): string;
  /** Dispatches MESSAGE_CREATE (queued for replay when no client is connected); returns the message id. */
  dispatchMessage(options: DispatchOptions): string;
  /** Dispatches THREAD_CREATE: a public thread under a server channel. */
  createThread(threadId: string, parentId: string): void;
  /** The next `count` requests to `METHOD /path-pattern` fail with `status` (`:id` matches a snowflake). */
  failNext(route: string, status: number, count?: number): void;
  /** Cuts every gateway socket without a close frame, as a network drop would. */
  dropGateway(): void;
  /** Connected and identified or resumed gateway sockets. */
  liveSockets(): number;
  /** While on, gateway connections are refused with HTTP 503 (REST keeps working). */
  refuseGateway(on: boolean): void;
  /** Holds the answers to gateway connection attempts until the returned function is called. */
  holdGateway(): () => void;
  /** Gateway connection attempts so far (refused ones included). */
  gatewayAttempts(): number;
  close(): Promise<void>;
}

export interface FakeDiscordOptions {
  heartbeatIntervalMs?: number;
}

interface Failure {
  pattern: RegExp;
  status: number;
}

export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const messages: DiscordSentMessage[] = [];
  const requests: DiscordRequest[] = [];
  const gatewayOps: GatewayPayload[] = [];
  const reactions: FakeDiscord["reactions"] = [];
  const typing: string[] = [];
  const files = new Map<string, string>();
  const failures: Failure[] = [];
  const live = new Set<WebSocket>();
  const events: Array<{ s: number; t: string; d: unknown }> = [];
  const sessionId = "fake-session-1";
  let seq = 0;
  let nextId = 7_000_000_000_000_000_000n;
  let sessions = 0;
  const snowflake = (): string => String(nextId++);

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ message: String(error), code: 0 }));
    });
  });
  let refusing = false;
  let held: Array<() => void> | undefined;
  let upgrades = 0;
  const wss = new WebSocketServer({
    server,
    path: "/gateway",
    verifyClient: (_info, done) => {
      upgrades++;
      const answer = (): void => (refusing ? done(false, 503, "Service Unavailable") : done(true));
      if (held) held.push(answer);
      else answer();
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const gatewayUrl = `ws://127.0.0.1:${port}/gateway`;

  const botAuthor = { id: DISCORD_BOT.id, username: DISCORD_BOT.username, discriminator: "0", global_name: null, avatar: null, bot: true };
  const userObject = (u: DiscordUser): Record<string, unknown> => ({ id: u.id, username: u.username, discriminator: "0", global_name: u.username, avatar: null });
  const dmChannel = (u: DiscordUser): string => `6${u.id.slice(1)}`;

  function messageObject(m: DiscordSentMessage): Record<string, unknown> {
    return {
      id: m.id,
      channel_id: m.channelId,
      author: botAuthor,
      content: m.content,
      timestamp: new Date().toISOString(),
      edited_timestamp: m.edits.length ? new Date().toISOString() : null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: m.files.map((f, i) => ({ id: `${m.id}${i}`, filename: f.name, size: f.content.length, url: `${url}/attachments/${m.id}/${f.name}`, proxy_url: "" })),
      embeds: [],
      pinned: false,
      type: m.replyTo ? 19 : 0,
    };
  }

  function json(res: ServerResponse, status: number, body?: unknown): void {
    if (body === undefined) return void res.writeHead(status).end();
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  }

  async function readBody(req: IncomingMessage): Promise<{ body: Record<string, unknown>; uploads: Array<{ name: string; content: string }> }> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const type = req.headers["content-type"] ?? "";
    if (raw.length === 0) return { body: {}, uploads: [] };
    if (type.startsWith("application/json")) return { body: JSON.parse(raw.toString("utf8")) as Record<string, unknown>, uploads: [] };
    if (type.startsWith("multipart/form-data")) {
      const form = await new Response(raw, { headers: { "content-type": type } }).formData();
      const uploads: Array<{ name: string; content: string }> = [];
      let body: Record<string, unknown> = {};
      for (const [key, value] of form.entries()) {
        if (key === "payload_json" && typeof value === "string") body = JSON.parse(value) as Record<string, unknown>;
        else if (typeof value !== "string") uploads.push({ name: value.name, content: await value.text() });
      }
      return { body, uploads };
    }
    return { body: {}, uploads: [] };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", url).pathname;
    const method = req.method ?? "GET";
    const attachment = /^\/attachments\/(.+)$/.exec(path);
    if (attachment) {
      const content = files.get(decodeURIComponent(attachment[1]!));
      if (content === undefined) return json(res, 404, { message: "Not Found", code: 0 });
      return void res.writeHead(200, { "content-type": "application/octet-stream" }).end(content);
    }
    if (!path.startsWith("/api/v10/")) return json(res, 404, { message: "404: Not Found", code: 0 });
    const route = path.slice("/api/v10".length);
    if (req.headers.authorization !== `Bot ${DISCORD_TOKEN}`) return json(res, 401, { message: "401: Unauthorized", code: 0 });
    const { body, uploads } = await readBody(req);
    requests.push({ method, path: route, body: uploads.length ? { ...body, uploads } : body });
    const key = `${method} ${route}`;
    const failure = failures.findIndex((f) => f.pattern.test(key));
    if (failure >= 0) {
      const { status } = failures.splice(failure, 1)[0]!;
      if (status === 429) {
        // Discord's documented rate-limit answer: seconds in the header and in the body.
        res.writeHead(429, { "content-type": "application/json", "retry-after": "7", "x-ratelimit-scope": "user" });
        return void res.end(JSON.stringify({ message: "You are being rate limited.", retry_after: 7, global: false }));
      }
      return json(res, status, { message: status >= 500 ? "Internal Server Error" : "Scripted failure", code: 0 });
    }
    let match: RegExpExecArray | null;
    if (key === "GET /gateway/bot") {
      return json(res, 200, { url: gatewayUrl, shards: 1, session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 } });
    }
    if ((match = /^POST \/channels\/(\d+)\/messages$/.exec(key))) {
      const ref = (body.message_reference as { message_id?: string } | undefined)?.message_id;
      const sent: DiscordSentMessage = { id: snowflake(), channelId: match[1]!, content: typeof body.content === "string" ? body.content : "", edits: [], files: uploads };
      if (ref) sent.replyTo = ref;
      if (sent.content.length > 2000) return json(res, 400, { message: "Invalid Form Body", code: 50035, errors: { content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] } } });
      messages.push(sent);
      for (const f of uploads) files.set(`${sent.id}/${f.name}`, f.content);
      return json(res, 200, messageObject(sent));
    }
    if ((match = /^PATCH \/channels\/(\d+)\/messages\/(\d+)$/.exec(key))) {
      const target = messages.find((m) => m.id === match![2] && m.channelId === match![1]);
      if (!target) return json(res, 404, { message: "Unknown Message", code: 10008 });
      if (typeof body.content === "string") {
        target.content = body.content;
        target.edits.push(body.content);
      }
      return json(res, 200, messageObject(target));
    }
    if ((match = /^POST \/channels\/(\d+)\/typing$/.exec(key))) {
      typing.push(match[1]!);
      return json(res, 204);
    }
    if ((match = /^(PUT|DELETE) \/channels\/(\d+)\/messages\/(\d+)\/reactions\/([^/]+)\/@me$/.exec(key))) {
      reactions.push({ action: match[1] === "PUT" ? "add" : "remove", channelId: match[2]!, messageId: match[3]!, emoji: decodeURIComponent(match[4]!) });
      return json(res, 204);
    }
    return json(res, 404, { message: `404: Not Found (${key})`, code: 0 });
  }

  function send(socket: WebSocket, payload: GatewayPayload): void {
    socket.send(JSON.stringify({ s: null, t: null, ...payload }));
  }

  function dispatch(t: string, d: unknown): void {
    const event = { s: ++seq, t, d };
    events.push(event);
    for (const socket of live) send(socket, { op: 0, ...event });
  }

  wss.on("connection", (socket) => {
    send(socket, { op: 10, d: { heartbeat_interval: options.heartbeatIntervalMs ?? 41_250 } });
    socket.on("close", () => live.delete(socket));
    socket.on("message", (data) => {
      const payload = JSON.parse(String(data)) as GatewayPayload;
      gatewayOps.push(payload);
      const d = payload.d as Record<string, unknown> | null;
      switch (payload.op) {
        case 1:
          return send(socket, { op: 11, d: null });
        case 2: {
          if (d?.token !== DISCORD_TOKEN) return socket.close(4004, "Authentication failed");
          sessions++;
          live.add(socket);
          const ready = {
            v: 10,
            user: botAuthor,
            guilds: [{ id: DISCORD_GUILD, unavailable: true }],
            session_id: sessionId,
            resume_gateway_url: gatewayUrl,
            shard: [0, 1],
            application: { id: DISCORD_BOT.id, flags: 0 },
          };
          const event = { s: ++seq, t: "READY", d: ready };
          events.push(event);
          send(socket, { op: 0, ...event });
          dispatch("GUILD_CREATE", guildCreate());
          return;
        }
        case 6: {
          if (d?.token !== DISCORD_TOKEN || d.session_id !== sessionId) return send(socket, { op: 9, d: false });
          sessions++;
          live.add(socket);
          for (const event of events.filter((e) => e.s > Number(d.seq ?? 0))) send(socket, { op: 0, ...event });
          dispatch("RESUMED", {});
          return;
        }
        default:
          return;
      }
    });
  });

  function guildCreate(): Record<string, unknown> {
    return {
      id: DISCORD_GUILD,
      name: "Test Guild",
      icon: null,
      owner_id: "2000000000000000001",
      afk_timeout: 300,
      verification_level: 0,
      default_message_notifications: 0,
      explicit_content_filter: 0,
      roles: [{ id: DISCORD_GUILD, name: "@everyone", color: 0, hoist: false, position: 0, permissions: "1024", managed: false, mentionable: false }],
      emojis: [],
      features: [],
      mfa_level: 0,
      system_channel_flags: 0,
      premium_tier: 0,
      preferred_locale: "en-US",
      nsfw_level: 0,
      stickers: [],
      joined_at: new Date().toISOString(),
      large: false,
      unavailable: false,
      member_count: 3,
      voice_states: [],
      members: [],
      channels: [
        { id: DISCORD_GROUP_CHANNEL, type: 0, guild_id: DISCORD_GUILD, name: "general", position: 0, permission_overwrites: [] },
        { id: "5000000000000000002", type: 0, guild_id: DISCORD_GUILD, name: "random", position: 1, permission_overwrites: [] },
      ],
      threads: [],
      presences: [],
      stage_instances: [],
      guild_scheduled_events: [],
    };
  }

  return {
    url,
    apiRoot: `${url}/api`,
    messages,
    requests,
    gatewayOps,
    reactions,
    typing,
    sessions: () => sessions,
    dmChannel,
    dispatchMessage(o) {
      const id = snowflake();
      const channelId = o.channelId ?? (o.guild ? DISCORD_GROUP_CHANNEL : dmChannel(o.author));
      const d: Record<string, unknown> = {
        id,
        channel_id: channelId,
        author: userObject(o.author),
        content: o.content,
        timestamp: new Date().toISOString(),
        edited_timestamp: null,
        tts: false,
        mention_everyone: false,
        mentions: (o.mentions ?? []).map(userObject),
        mention_roles: [],
        attachments: [],
        embeds: [],
        pinned: false,
        type: 0,
      };
      if (o.guild) {
        d.guild_id = DISCORD_GUILD;
        d.member = { roles: [], joined_at: new Date().toISOString(), deaf: false, mute: false };
      } else {
        d.channel_type = 1;
      }
      if (o.replyToBotMessage) {
        const earlier = messages.find((m) => m.id === o.replyToBotMessage);
        d.type = 19;
        d.message_reference = { message_id: o.replyToBotMessage, channel_id: channelId, ...(o.guild ? { guild_id: DISCORD_GUILD } : {}) };
        d.referenced_message = messageObject(earlier ?? { id: o.replyToBotMessage, channelId, content: "earlier", edits: [], files: [] });
      }
      if (o.attachment) {
        const attachmentId = snowflake();
        files.set(`${attachmentId}/${o.attachment.name}`, o.attachment.content);
        d.attachments = [
          {
            id: attachmentId,
            filename: o.attachment.name,
            size: o.attachment.content.length,
            content_type: o.attachment.contentType,
            url: `${url}/attachments/${attachmentId}/${o.attachment.name}`,
            proxy_url: `${url}/attachments/${attachmentId}/${o.attachment.name}`,
          },
        ];
      }
      dispatch("MESSAGE_CREATE", d);
      return id;
    },
    createThread(threadId, parentId) {
      dispatch("THREAD_CREATE", {
        id: threadId,
        type: 11,
        guild_id: DISCORD_GUILD,
        parent_id: parentId,
        name: "a thread",
        owner_id: "2000000000000000001",
        message_count: 0,
        member_count: 1,
        rate_limit_per_user: 0,
        thread_metadata: { archived: false, auto_archive_duration: 1440, archive_timestamp: new Date().toISOString(), locked: false },
        newly_created: true,
      });
    },
    failNext(route, status, count = 1) {
      const [method, pathPattern] = route.split(" ");
      const pattern = new RegExp(`^${method} ${pathPattern!.replace(/:\w+/g, "\\d+")}$`);
      for (let i = 0; i < count; i++) failures.push({ pattern, status });
    },
    dropGateway() {
      for (const socket of live) socket.terminate();
      live.clear();
    },
    liveSockets: () => live.size,
    holdGateway() {
      const answers: Array<() => void> = [];
      held = answers;
      return () => {
        held = undefined;
        for (const answer of answers) answer();
      };
    },
    refuseGateway(on) {
      refusing = on;
    },
    gatewayAttempts: () => upgrades,
    async close() {
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
