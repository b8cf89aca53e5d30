/**
 * A loopback fake of a Mattermost server, from Mattermost's documented API v4 wire format:
 * REST under `/api/v4` (users/me and users/{id}, posts create/patch/delete, a post's thread,
 * multipart file uploads, a post's file infos and file downloads, reactions, direct channels), errors as
 * Mattermost's AppError JSON, and the WebSocket `/api/v4/websocket` (Authorization header or
 * `authentication_challenge`, `hello` with the connection id, `posted` events with `seq`,
 * `ping` → `pong`, the `user_typing` action). Every post a user makes is broadcast as a
 * `posted` event (the bot's own too, as the real server does). Everything the bot does is
 * recorded.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";
import type { WebSocket } from "ws";

export const MATTERMOST_TOKEN = "fake-mattermost-bot-token";
export const MATTERMOST_TEAM = "teamaaaaaaaaaaaaaaaaaaaaaa";
export const MATTERMOST_GROUP_CHANNEL = "townsquareaaaaaaaaaaaaaaaa";

export interface MattermostUser {
  id: string;
  username: string;
}

export const MATTERMOST_BOT: MattermostUser = { id: "botaaaaaaaaaaaaaaaaaaaaaaa", username: "nanobot" };

export interface FakePost {
  id: string;
  channelId: string;
  userId: string;
  message: string;
  rootId: string;
  edits: string[];
  fileIds: string[];
  createAt: number;
  deleted: boolean;
}

export interface FakeFile {
  id: string;
  name: string;
  mimeType: string;
  content: string;
}

export interface MattermostRequest {
  method: string;
  path: string;
  body: unknown;
}

export interface UserPostOptions {
  author: MattermostUser;
  message: string;
  /** A channel post (else a direct message in the author's DM channel with the bot). */
  channelId?: string;
  /** Thread the post under this root post. */
  rootId?: string;
  /** Mark the bot as @mentioned in the event's `mentions`. */
  mentionsBot?: boolean;
  file?: { name: string; mimeType: string; content: string };
  teamId?: string;
  channelType?: "O" | "P" | "G" | "D";
}

export interface FakeMattermost {
  url: string;
  posts: FakePost[];
  files: Map<string, FakeFile>;
  requests: MattermostRequest[];
  /** Actions the client sent on the WebSocket (ping, user_typing, …). */
  actions: Array<{ action: string; data: unknown }>;
  reactions: Array<{ action: "add" | "remove"; postId: string; emoji: string }>;
  /** Channel ids a `user_typing` action named. */
  typing: string[];
  /** Posts the bot made (not deleted), oldest first. */
  botPosts(): FakePost[];
  dmChannel(user: MattermostUser): string;
  /** A user posts; the `posted` event goes to every authenticated socket. Returns the post id. */
  userPosts(options: UserPostOptions): string;
  /** The next `count` requests to `METHOD /path` (`:id` matches one path segment) fail with `status`. */
  failNext(route: string, status: number, count?: number): void;
  /** Cuts every socket without a close frame, as a network drop would. */
  dropSockets(): void;
  /** Authenticated sockets now open. */
  liveSockets(): number;
  /** Authenticated connections so far. */
  connections(): number;
  /** While on, pings get no pong (a half-dead connection). */
  silence(on: boolean): void;
  /** While on, WebSocket upgrades are refused with HTTP 503 (REST keeps working). */
  refuseSockets(on: boolean): void;
  /** WebSocket connection attempts so far (refused ones included). */
  socketAttempts(): number;
  close(): Promise<void>;
}

interface Failure {
  pattern: RegExp;
  status: number;
}

/** The server reads the scheme case-insensitively (Client4 sends "BEARER"). */
function bearerOk(req: IncomingMessage): boolean {
  const [scheme, token] = (req.headers.authorization ?? "").split(" ");
  return scheme?.toLowerCase() === "bearer" && token === MATTERMOST_TOKEN;
}

/** Mattermost ids: 26 lower-case letters and digits. */
function newId(): string {
  return randomBytes(16).toString("hex").slice(0, 26);
}

export async function startFakeMattermost(extraUsers: MattermostUser[] = []): Promise<FakeMattermost> {
  const posts: FakePost[] = [];
  const files = new Map<string, FakeFile>();
  const requests: MattermostRequest[] = [];
  const actions: FakeMattermost["actions"] = [];
  const reactions: FakeMattermost["reactions"] = [];
  const typing: string[] = [];
  const failures: Failure[] = [];
  const users = new Map<string, MattermostUser>([[MATTERMOST_BOT.id, MATTERMOST_BOT], ...extraUsers.map((u) => [u.id, u] as const)]);
  /** Channel id → type and team. */
  const channels = new Map<string, { type: string; teamId: string; members: string[] }>([
    [MATTERMOST_GROUP_CHANNEL, { type: "O", teamId: MATTERMOST_TEAM, members: [] }],
  ]);
  const live = new Map<WebSocket, { seq: number }>();
  let connections = 0;
  let silent = false;
  let refusing = false;
  let upgrades = 0;
  let clock = 1_700_000_000_000;

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) appError(res, 500, String(error));
    });
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on("upgrade", (req, socket, head) => {
    if (new URL(req.url ?? "/", "http://x").pathname !== "/api/v4/websocket") return socket.destroy();
    upgrades++;
    if (refusing) return void socket.end("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    wss.handleUpgrade(req, socket, head, (ws) => onSocket(ws, req));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  const dmChannel = (u: MattermostUser): string => {
    const id = `dm${u.id.slice(2)}`;
    if (!channels.has(id)) channels.set(id, { type: "D", teamId: "", members: [u.id, MATTERMOST_BOT.id] });
    return id;
  };

  function postJson(p: FakePost): Record<string, unknown> {
    return {
      id: p.id,
      create_at: p.createAt,
      update_at: p.createAt + p.edits.length,
      edit_at: p.edits.length ? p.createAt + p.edits.length : 0,
      delete_at: 0,
      is_pinned: false,
      user_id: p.userId,
      channel_id: p.channelId,
      root_id: p.rootId,
      original_id: "",
      message: p.message,
      type: "",
      props: {},
      hashtags: "",
      file_ids: p.fileIds,
      pending_post_id: "",
      metadata: p.fileIds.length ? { files: p.fileIds.map((id) => fileInfoJson(files.get(id)!)) } : {},
    };
  }

  function fileInfoJson(f: FakeFile): Record<string, unknown> {
    const dot = f.name.lastIndexOf(".");
    return { id: f.id, name: f.name, extension: dot >= 0 ? f.name.slice(dot + 1) : "", size: Buffer.byteLength(f.content), mime_type: f.mimeType, create_at: clock };
  }

  function userJson(u: MattermostUser): Record<string, unknown> {
    return { id: u.id, username: u.username, first_name: "", last_name: "", nickname: "", email: `${u.username}@example.com`, roles: "system_user", locale: "en", is_bot: u.id === MATTERMOST_BOT.id };
  }

  function json(res: ServerResponse, status: number, body: unknown): void {
    // Client4 reads the body as JSON only when Content-Type is exactly application/json.
    res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
  }

  /** Mattermost's error body (model.AppError). */
  function appError(res: ServerResponse, status: number, message: string): void {
    json(res, status, { id: "api.fake.error", message, detailed_error: "", request_id: newId(), status_code: status });
  }

  async function readBody(req: IncomingMessage): Promise<{ body: unknown; form?: FormData }> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const type = req.headers["content-type"] ?? "";
    if (raw.length === 0) return { body: {} };
    if (type.startsWith("multipart/form-data")) {
      const form = await new Response(raw, { headers: { "content-type": type } }).formData();
      return { body: {}, form };
    }
    return { body: JSON.parse(raw.toString("utf8")) as unknown };
  }

  function broadcastPosted(p: FakePost, extra: { mentions?: string[]; teamId?: string; channelType?: string } = {}): void {
    const channel = channels.get(p.channelId);
    const author = users.get(p.userId);
    const data: Record<string, unknown> = {
      channel_display_name: p.channelId,
      channel_name: p.channelId,
      channel_type: extra.channelType ?? channel?.type ?? "O",
      post: JSON.stringify(postJson(p)),
      sender_name: `@${author?.username ?? p.userId}`,
      set_online: true,
      team_id: extra.teamId ?? channel?.teamId ?? "",
    };
    if (extra.mentions?.length) data.mentions = JSON.stringify(extra.mentions);
    for (const [socket, state] of live) {
      socket.send(JSON.stringify({ event: "posted", data, broadcast: { omit_users: null, user_id: "", channel_id: p.channelId, team_id: "" }, seq: state.seq++ }));
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", url).pathname;
    const method = req.method ?? "GET";
    if (!path.startsWith("/api/v4/")) return appError(res, 404, "Not found");
    const route = path.slice("/api/v4".length);
    if (!bearerOk(req)) return appError(res, 401, "Invalid or expired session, please login again.");
    const { body, form } = await readBody(req);
    requests.push({ method, path: route, body: form ? Object.fromEntries([...form.keys()].map((k) => [k, "(form)"])) : body });
    const key = `${method} ${route}`;
    const failure = failures.findIndex((f) => f.pattern.test(key));
    if (failure >= 0) {
      const { status } = failures.splice(failure, 1)[0]!;
      return appError(res, status, status === 429 ? "Too many requests" : "Scripted failure");
    }
    const b = body as Record<string, unknown>;
    let m: RegExpExecArray | null;
    if (key === "GET /users/me") return json(res, 200, userJson(MATTERMOST_BOT));
    if ((m = /^GET \/users\/([a-z0-9]+)$/.exec(key))) {
      const user = users.get(m[1]!);
      return user ? json(res, 200, userJson(user)) : appError(res, 404, "Unable to find the user.");
    }
    if (key === "POST /posts") {
      const channelId = String(b.channel_id ?? "");
      const message = typeof b.message === "string" ? b.message : "";
      if (!channels.has(channelId)) return appError(res, 403, "You do not have the appropriate permissions.");
      if ([...message].length > 16383) return appError(res, 400, "Invalid message: too long");
      const fileIds = Array.isArray(b.file_ids) ? b.file_ids.map(String) : [];
      if (fileIds.some((id) => !files.has(id))) return appError(res, 400, "Invalid file id");
      const post: FakePost = { id: newId(), channelId, userId: MATTERMOST_BOT.id, message, rootId: typeof b.root_id === "string" ? b.root_id : "", edits: [], fileIds, createAt: clock++, deleted: false };
      posts.push(post);
      broadcastPosted(post);
      return json(res, 201, postJson(post));
    }
    if ((m = /^PUT \/posts\/([a-z0-9]+)\/patch$/.exec(key))) {
      const post = posts.find((p) => p.id === m![1] && !p.deleted);
      if (!post) return appError(res, 404, "Unable to find the existing post or comment to update.");
      if (typeof b.message === "string") {
        post.message = b.message;
        post.edits.push(b.message);
      }
      return json(res, 200, postJson(post));
    }
    if ((m = /^DELETE \/posts\/([a-z0-9]+)$/.exec(key))) {
      const post = posts.find((p) => p.id === m![1]);
      if (post) post.deleted = true;
      return json(res, 200, { status: "OK" });
    }
    if ((m = /^GET \/posts\/([a-z0-9]+)\/thread$/.exec(key))) {
      const thread = posts.filter((p) => !p.deleted && (p.id === m![1] || p.rootId === m![1]));
      if (thread.length === 0) return appError(res, 404, "Unable to find the existing post or comment.");
      return json(res, 200, { order: thread.map((p) => p.id), posts: Object.fromEntries(thread.map((p) => [p.id, postJson(p)])), next_post_id: "", prev_post_id: "", has_next: false });
    }
    if ((m = /^GET \/posts\/([a-z0-9]+)\/files\/info$/.exec(key))) {
      const post = posts.find((p) => p.id === m![1] && !p.deleted);
      if (!post) return appError(res, 404, "Unable to find the existing post or comment.");
      return json(res, 200, post.fileIds.map((id) => fileInfoJson(files.get(id)!)));
    }
    if (key === "POST /files" && form) {
      const infos: Array<Record<string, unknown>> = [];
      for (const value of form.getAll("files")) {
        if (typeof value === "string") continue;
        const file: FakeFile = { id: newId(), name: value.name, mimeType: value.type || "application/octet-stream", content: await value.text() };
        files.set(file.id, file);
        infos.push(fileInfoJson(file));
      }
      return json(res, 201, { file_infos: infos, client_ids: [] });
    }
    if ((m = /^GET \/files\/([a-z0-9]+)(\/info)?$/.exec(key))) {
      const file = files.get(m[1]!);
      if (!file) return appError(res, 404, "Unable to find the file.");
      if (m[2]) return json(res, 200, fileInfoJson(file));
      return void res.writeHead(200, { "Content-Type": file.mimeType, "Content-Disposition": `attachment; filename="${file.name}"` }).end(file.content);
    }
    if (key === "POST /reactions") {
      reactions.push({ action: "add", postId: String(b.post_id), emoji: String(b.emoji_name) });
      return json(res, 201, { user_id: b.user_id, post_id: b.post_id, emoji_name: b.emoji_name, create_at: clock });
    }
    if ((m = /^DELETE \/users\/([a-z0-9]+)\/posts\/([a-z0-9]+)\/reactions\/([^/]+)$/.exec(key))) {
      reactions.push({ action: "remove", postId: m[2]!, emoji: decodeURIComponent(m[3]!) });
      return json(res, 200, { status: "OK" });
    }
    if (key === "POST /channels/direct" && Array.isArray(body)) {
      const other = (body as string[]).find((id) => id !== MATTERMOST_BOT.id);
      const user = other ? users.get(other) : undefined;
      if (!user) return appError(res, 400, "Invalid user ids");
      return json(res, 201, { id: dmChannel(user), type: "D", team_id: "", name: `${MATTERMOST_BOT.id}__${user.id}` });
    }
    if ((m = /^GET \/channels\/([a-z0-9]+)$/.exec(key))) {
      const channel = channels.get(m[1]!);
      return channel ? json(res, 200, { id: m[1], type: channel.type, team_id: channel.teamId }) : appError(res, 404, "Unable to find the channel.");
    }
    return appError(res, 404, `Not found (${key})`);
  }

  function onSocket(socket: WebSocket, req: IncomingMessage): void {
    let authed = false;
    const authenticate = (): void => {
      if (authed) return;
      authed = true;
      connections++;
      const state = { seq: 0 };
      live.set(socket, state);
      socket.send(JSON.stringify({ event: "hello", data: { connection_id: newId(), server_version: "10.11.0", server_hostname: "fake" }, broadcast: { omit_users: null, user_id: MATTERMOST_BOT.id, channel_id: "", team_id: "" }, seq: state.seq++ }));
    };
    socket.on("close", () => live.delete(socket));
    socket.on("error", () => undefined);
    socket.on("message", (raw) => {
      const msg = JSON.parse(String(raw)) as { action: string; seq: number; data: Record<string, unknown> | null };
      actions.push({ action: msg.action, data: msg.data });
      if (msg.action === "authentication_challenge") {
        if (msg.data?.token !== MATTERMOST_TOKEN) {
          socket.send(JSON.stringify({ status: "FAIL", seq_reply: msg.seq, error: { id: "api.web_socket_router.not_authenticated.app_error", message: "not authenticated" } }));
          return socket.close(1008);
        }
        socket.send(JSON.stringify({ status: "OK", seq_reply: msg.seq }));
        return authenticate();
      }
      if (!authed) return;
      if (msg.action === "ping") {
        if (!silent) socket.send(JSON.stringify({ status: "OK", seq_reply: msg.seq, data: { text: "pong", version: "10.11.0", server_time: clock } }));
        return;
      }
      if (msg.action === "user_typing") {
        typing.push(String(msg.data?.channel_id ?? ""));
        socket.send(JSON.stringify({ status: "OK", seq_reply: msg.seq }));
      }
    });
    // A valid Authorization header authenticates the upgrade itself (the server sends hello at once).
    if (bearerOk(req)) authenticate();
  }

  return {
    url,
    posts,
    files,
    requests,
    actions,
    reactions,
    typing,
    botPosts: () => posts.filter((p) => p.userId === MATTERMOST_BOT.id && !p.deleted),
    dmChannel,
    userPosts(o) {
      users.set(o.author.id, o.author);
      const channelId = o.channelId ?? dmChannel(o.author);
      const fileIds: string[] = [];
      if (o.file) {
        const file: FakeFile = { id: newId(), name: o.file.name, mimeType: o.file.mimeType, content: o.file.content };
        files.set(file.id, file);
        fileIds.push(file.id);
      }
      const post: FakePost = { id: newId(), channelId, userId: o.author.id, message: o.message, rootId: o.rootId ?? "", edits: [], fileIds, createAt: clock++, deleted: false };
      posts.push(post);
      const extra: { mentions?: string[]; teamId?: string; channelType?: string } = {};
      if (o.mentionsBot) extra.mentions = [MATTERMOST_BOT.id];
      if (o.teamId !== undefined) extra.teamId = o.teamId;
      if (o.channelType) extra.channelType = o.channelType;
      broadcastPosted(post, extra);
      return post.id;
    },
    failNext(route, status, count = 1) {
      const [method, pathPattern] = route.split(" ");
      const pattern = new RegExp(`^${method} ${pathPattern!.replace(/:\w+/g, "[a-z0-9]+")}$`);
      for (let i = 0; i < count; i++) failures.push({ pattern, status });
    },
    dropSockets() {
      for (const socket of live.keys()) socket.terminate();
      live.clear();
    },
    liveSockets: () => live.size,
    connections: () => connections,
    silence(on) {
      silent = on;
    },
    refuseSockets(on) {
      refusing = on;
    },
    socketAttempts: () => upgrades,
    async close() {
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
