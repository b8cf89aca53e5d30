/**
 * A loopback fake Matrix homeserver, from the client-server API spec (v1.11): the calls
 * matrix-js-sdk makes for a bot — `/versions`, `whoami`, password `login`, push rules,
 * capabilities, filters, the `/sync` long poll (joined rooms with state and timeline,
 * invites, `since` tokens, held until an event arrives or `timeout` passes), joins, room sends
 * (idempotent per access token and transaction id, as the spec requires), redactions, typing,
 * media upload (`/_matrix/media/v3/upload`) and download (authenticated
 * `/_matrix/client/v1/media/download`, and the legacy `/_matrix/media/v3/download`).
 * Other users can have sessions of their own (`addUser`), so a second client can sync and send,
 * and rooms can be encrypted (`m.room.encryption`), with the key endpoints of
 * `fake-matrix-keys.ts`. Everything the bot does is recorded; syncs can be failed or cut.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createKeyServer } from "./fake-matrix-keys.js";
import type { Caller } from "./fake-matrix-keys.js";

import { MATRIX_SERVER, MATRIX_BOT, MATRIX_TOKEN, MATRIX_DEVICE, MATRIX_PASSWORD, MATRIX_GROUP_ROOM } from "./fake-matrix-types.js";
import type { FakeMatrix, FakeMatrixOptions, Json, MatrixEventJson, MatrixRequest, MatrixSentMessage } from "./fake-matrix-types.js";

export { MATRIX_SERVER, MATRIX_BOT, MATRIX_TOKEN, MATRIX_DEVICE, MATRIX_PASSWORD, MATRIX_GROUP_ROOM };
export type { FakeMatrix, FakeMatrixOptions, Json, MatrixEventJson, MatrixRequest, MatrixSentMessage };

interface RoomState {
  members: Map<string, string>;
  name?: string;
  /** Stream position at which each member joined. */
  joinedAt: Map<string, number>;
}

interface Held {
  caller: Caller;
  res: ServerResponse;
  since: number | undefined;
  cancel: () => void;
  wake: () => void;
}

const PREFIX = "/_matrix/client";

export async function startFakeMatrix(options: FakeMatrixOptions = {}): Promise<FakeMatrix> {
  const log: Array<{ pos: number; event: MatrixEventJson }> = [];
  const rooms = new Map<string, RoomState>();
  const invites = new Map<string, { inviter: string; pos: number; name?: string }>();
  const media = new Map<string, { name: string; mimeType: string; data: Buffer }>();
  const txns = new Map<string, string>();
  const filters = new Map<string, unknown>();
  const failures: Array<{ pattern: RegExp; status: number; body: Json }> = [];
  const held = new Set<Held>();
  const tokens = new Map<string, Caller>([[MATRIX_TOKEN, { userId: MATRIX_BOT.id, deviceId: MATRIX_DEVICE, token: MATRIX_TOKEN }]]);
  const keys = createKeyServer(
    () => ++pos,
    () => {
      for (const h of [...held]) h.wake();
    },
  );
  const loggedOut: string[] = [];
  const messages: MatrixSentMessage[] = [];
  const requests: MatrixRequest[] = [];
  const typing: string[] = [];
  const typingCalls: FakeMatrix["typingCalls"] = [];
  const joins: string[] = [];
  const unknown: string[] = [];
  let pos = 0;
  let nextId = 1;
  let syncFailures = 0;
  let sessions = 0;
  let streamBroken = true;
  let logins = 0;

  const newEventId = (): string => `$ev${nextId++}-${Math.random().toString(36).slice(2, 8)}`;

  function append(roomId: string, event: Omit<MatrixEventJson, "event_id" | "origin_server_ts" | "room_id"> & { event_id?: string }): MatrixEventJson {
    const full: MatrixEventJson = { event_id: newEventId(), origin_server_ts: Date.now(), room_id: roomId, ...event };
    log.push({ pos: ++pos, event: full });
    for (const h of [...held]) h.wake();
    return full;
  }

  function member(roomId: string, userId: string, membership: string, sender = userId): void {
    const room = rooms.get(roomId)!;
    room.members.set(userId, membership);
    if (membership === "join") room.joinedAt.set(userId, pos + 1);
    const displayname = userId === MATRIX_BOT.id ? MATRIX_BOT.displayName : userId.slice(1).split(":")[0]!;
    append(roomId, { type: "m.room.member", sender, state_key: userId, content: { membership, displayname } });
  }

  function createRoom(roomId: string, creator: string, name?: string): RoomState {
    const room: RoomState = { members: new Map(), joinedAt: new Map(), ...(name ? { name } : {}) };
    rooms.set(roomId, room);
    append(roomId, { type: "m.room.create", sender: creator, state_key: "", content: { creator, room_version: "10" } });
    member(roomId, creator, "join");
    if (name) append(roomId, { type: "m.room.name", sender: creator, state_key: "", content: { name } });
    return room;
  }

  function joinBot(roomId: string): void {
    const room = rooms.get(roomId);
    if (!room) throw new Error(`no room ${roomId}`);
    if (room.members.get(MATRIX_BOT.id) === "join") return;
    member(roomId, MATRIX_BOT.id, "join");
    invites.delete(roomId);
  }

  /** The latest state event per (type, state_key) of a room, up to `upTo`. */
  function currentState(roomId: string, upTo = Number.POSITIVE_INFINITY): MatrixEventJson[] {
    const state = new Map<string, MatrixEventJson>();
    for (const { pos: p, event } of log) {
      if (p > upTo || event.room_id !== roomId || event.state_key === undefined) continue;
      state.set(`${event.type}\u0000${event.state_key}`, event);
    }
    return [...state.values()];
  }

  function forClient(event: MatrixEventJson): Json {
    const { room_id: _room, ...rest } = event;
    return rest;
  }

  function syncBody(caller: Caller, since: number | undefined): { body: Json; empty: boolean } {
    const join: Json = {};
    const invite: Json = {};
    let empty = true;
    const me = caller.userId;
    for (const [roomId, room] of rooms) {
      if (room.members.get(me) !== "join") continue;
      const fresh = since === undefined || (room.joinedAt.get(me) ?? 0) > since;
      const events = log.filter((e) => e.event.room_id === roomId && (since === undefined || e.pos > since));
      if (!fresh && events.length === 0) continue;
      let state: MatrixEventJson[] = [];
      let timeline: MatrixEventJson[] = events.map((e) => e.event);
      if (fresh) {
        // A newly joined room: its state, and the latest ten events as the timeline.
        const recent = log.filter((e) => e.event.room_id === roomId).slice(-10);
        const firstShown = recent[0]?.pos ?? pos;
        state = currentState(roomId, firstShown - 1);
        timeline = recent.map((e) => e.event);
      }
      const joined = [...room.members.values()].filter((m) => m === "join").length;
      const invited = [...room.members.values()].filter((m) => m === "invite").length;
      join[roomId] = {
        summary: { "m.joined_member_count": joined, "m.invited_member_count": invited },
        state: { events: state.map(forClient) },
        timeline: { events: timeline.map(forClient), limited: fresh, prev_batch: `p${pos}` },
        ephemeral: { events: [] },
        account_data: { events: [] },
        unread_notifications: { notification_count: 0, highlight_count: 0 },
      };
      empty = false;
    }
    for (const [roomId, inv] of invites) {
      if (me !== MATRIX_BOT.id || (since !== undefined && inv.pos <= since)) continue;
      const events: Json[] = [
        { type: "m.room.create", sender: inv.inviter, state_key: "", content: { creator: inv.inviter } },
        { type: "m.room.member", sender: inv.inviter, state_key: inv.inviter, content: { membership: "join" } },
        { type: "m.room.member", sender: inv.inviter, state_key: MATRIX_BOT.id, content: { membership: "invite", displayname: MATRIX_BOT.displayName } },
      ];
      invite[roomId] = { invite_state: { events } };
      empty = false;
    }
    const shares = (other: string): boolean => [...rooms.values()].some((r) => r.members.get(me) === "join" && r.members.get(other) === "join");
    const { part, news } = keys.syncPart(caller, since, shares);
    return { body: { next_batch: `s${pos}`, rooms: { join, invite, leave: {} }, presence: { events: [] }, account_data: { events: [] }, ...part }, empty: empty && !news };
  }

  function json(res: ServerResponse, status: number, body: unknown): void {
    const data = JSON.stringify(body);
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(data) });
    res.end(data);
  }

  function matrixError(res: ServerResponse, status: number, errcode: string, error: string): void {
    json(res, status, { errcode, error });
  }

  async function readBody(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  function recordSend(roomId: string, sender: string, type: string, txnId: string, content: Json): string {
    const event = append(roomId, { type, sender, content, unsigned: { transaction_id: txnId } });
    if (type !== "m.room.message" || sender !== MATRIX_BOT.id) return event.event_id;
    const relates = (content["m.relates_to"] ?? {}) as Json;
    if (relates.rel_type === "m.replace") {
      const original = messages.find((m) => m.eventId === relates.event_id);
      const next = (content["m.new_content"] ?? {}) as Json;
      if (original) {
        original.edits.push(String(next.body ?? ""));
        original.body = String(next.body ?? "");
        original.current = next;
      }
      return event.event_id;
    }
    const sent: MatrixSentMessage = {
      eventId: event.event_id,
      roomId,
      txnId,
      msgtype: String(content.msgtype ?? ""),
      body: String(content.body ?? ""),
      content,
      current: content,
      edits: [],
      redacted: false,
    };
    const inReplyTo = (relates["m.in_reply_to"] as Json | undefined)?.event_id;
    if (typeof inReplyTo === "string") sent.replyTo = inReplyTo;
    if (relates.rel_type === "m.thread" && typeof relates.event_id === "string") sent.threadRoot = relates.event_id;
    if (typeof content.url === "string") {
      const stored = media.get(content.url);
      if (stored) sent.file = { name: String(content.filename ?? content.body ?? stored.name), content: stored.data.toString("utf8"), mimeType: stored.mimeType };
    }
    messages.push(sent);
    return event.event_id;
  }

  function answerSync(h: Held): void {
    held.delete(h);
    h.cancel();
    const { body } = syncBody(h.caller, h.since);
    if (streamBroken && h.caller.userId === MATRIX_BOT.id) {
      streamBroken = false;
      sessions++;
    }
    json(h.res, 200, body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://x");
    const path = url.pathname;
    const method = req.method ?? "GET";
    const raw = await readBody(req);
    const auth = req.headers.authorization;
    const token = auth?.startsWith("Bearer ") ? auth.slice(7) : (url.searchParams.get("access_token") ?? undefined);
    let body: unknown = undefined;
    const isUpload = path.startsWith("/_matrix/media/v3/upload");
    if (!isUpload && raw.length > 0) {
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        return matrixError(res, 400, "M_NOT_JSON", "body is not JSON");
      }
    }
    requests.push({ method, path, query: Object.fromEntries(url.searchParams), body, ...(token ? { token } : {}) });

    // Injected failures hit the bot only: other users' clients are the test's instruments.
    const fromUser = token !== undefined && tokens.has(token) && tokens.get(token)!.userId !== MATRIX_BOT.id;
    const failure = fromUser ? -1 : failures.findIndex((f) => f.pattern.test(`${method} ${path}`));
    if (failure >= 0) {
      const [f] = failures.splice(failure, 1);
      return json(res, f!.status, f!.body);
    }

    if (method === "GET" && path === `${PREFIX}/versions`) {
      return json(res, 200, { versions: ["v1.1", "v1.2", "v1.3", "v1.4", "v1.5", "v1.6", "v1.7", "v1.8", "v1.9", "v1.10", "v1.11"], unstable_features: {} });
    }
    if (method === "POST" && path === `${PREFIX}/v3/login`) {
      const b = (body ?? {}) as Json;
      const identifier = (b.identifier ?? {}) as Json;
      const user = identifier.user ?? b.user;
      if (b.type !== "m.login.password" || (user !== MATRIX_BOT.id && user !== "nanobot") || b.password !== MATRIX_PASSWORD) {
        return matrixError(res, 403, "M_FORBIDDEN", "Invalid username or password");
      }
      logins++;
      const issued = `syt_login_${logins}`;
      const deviceId = typeof b.device_id === "string" ? b.device_id : `LOGIN${logins}`;
      tokens.set(issued, { userId: MATRIX_BOT.id, deviceId, token: issued });
      return json(res, 200, { user_id: MATRIX_BOT.id, access_token: issued, device_id: deviceId, home_server: MATRIX_SERVER });
    }
    if (!token) return matrixError(res, 401, "M_MISSING_TOKEN", "Missing access token");
    const caller = tokens.get(token);
    if (!caller) return matrixError(res, 401, "M_UNKNOWN_TOKEN", "Invalid access token");

    const mediaDownload = /^\/_matrix\/(?:client\/v1\/media|media\/v3)\/download\/([^/]+)\/([^/]+)/.exec(path);
    if (method === "GET" && mediaDownload) {
      const legacy = path.startsWith("/_matrix/media/v3/");
      if (!legacy && options.legacyMediaOnly) return matrixError(res, 404, "M_UNRECOGNIZED", "Unrecognized request");
      const stored = media.get(`mxc://${decodeURIComponent(mediaDownload[1]!)}/${decodeURIComponent(mediaDownload[2]!)}`);
      if (!stored) return matrixError(res, 404, "M_NOT_FOUND", "Not found");
      res.writeHead(200, { "content-type": stored.mimeType, "content-length": stored.data.length });
      res.end(stored.data);
      return;
    }
    if (method === "GET" && (path === "/_matrix/client/v1/media/config" || path === "/_matrix/media/v3/config")) {
      return json(res, 200, { "m.upload.size": options.uploadLimit ?? 50 * 1024 * 1024 });
    }
    if (method === "POST" && isUpload) {
      const name = url.searchParams.get("filename") ?? "upload";
      const mxc = `mxc://${MATRIX_SERVER}/up${nextId++}`;
      media.set(mxc, { name, mimeType: String(req.headers["content-type"] ?? "application/octet-stream"), data: raw });
      return json(res, 200, { content_uri: mxc });
    }
    if (!path.startsWith(`${PREFIX}/v3/`)) {
      unknown.push(`${method} ${path}`);
      return matrixError(res, 404, "M_UNRECOGNIZED", "Unrecognized request");
    }
    const route = path.slice(`${PREFIX}/v3`.length);
    const parts = route.split("/").slice(1).map(decodeURIComponent);

    if (method === "GET" && route === "/account/whoami") return json(res, 200, { user_id: caller.userId, device_id: caller.deviceId });
    if (method === "POST" && route === "/logout") {
      tokens.delete(token);
      keys.removeDevice(caller.userId, caller.deviceId);
      loggedOut.push(caller.deviceId);
      return json(res, 200, {});
    }
    const keyReply = keys.handle(method, route, { ...Object.fromEntries(url.searchParams), ...((body ?? {}) as Json) }, caller);
    if (keyReply) return json(res, keyReply.status, keyReply.body);
    if (method === "GET" && route.startsWith("/pushrules")) return json(res, 200, { global: { override: [], content: [], room: [], sender: [], underride: [] } });
    if (method === "GET" && route === "/capabilities") return json(res, 200, { capabilities: {} });
    if (parts[0] === "user" && parts[2] === "filter") {
      if (method === "POST") {
        const id = String(filters.size + 1);
        filters.set(id, body);
        return json(res, 200, { filter_id: id });
      }
      const stored = filters.get(parts[3] ?? "");
      return stored ? json(res, 200, stored) : matrixError(res, 404, "M_NOT_FOUND", "No such filter");
    }
    if (method === "GET" && route === "/sync") {
      if (syncFailures > 0) {
        syncFailures--;
        streamBroken = true;
        return matrixError(res, 502, "M_UNKNOWN", "Bad Gateway");
      }
      const sinceParam = url.searchParams.get("since");
      const since = sinceParam ? Number(sinceParam.slice(1)) : undefined;
      const timeout = Number(url.searchParams.get("timeout") ?? "0");
      const { empty } = syncBody(caller, since);
      const h: Held = { caller, res, since, cancel: () => undefined, wake: () => undefined };
      if (!empty || since === undefined || timeout <= 0) return answerSync(h);
      const timer = setTimeout(() => answerSync(h), timeout);
      h.cancel = () => clearTimeout(timer);
      h.wake = () => {
        if (!syncBody(caller, since).empty) answerSync(h);
      };
      held.add(h);
      res.on("close", () => {
        if (held.delete(h)) {
          h.cancel();
          if (caller.userId === MATRIX_BOT.id) streamBroken = true;
        }
      });
      return;
    }
    if (method === "POST" && (parts[0] === "join" || (parts[0] === "rooms" && parts[2] === "join"))) {
      const roomId = parts[0] === "join" ? parts[1]! : parts[1]!;
      if (!rooms.has(roomId)) return matrixError(res, 404, "M_NOT_FOUND", "No such room");
      joinBot(roomId);
      joins.push(roomId);
      return json(res, 200, { room_id: roomId });
    }
    if (parts[0] === "rooms" && parts.length >= 3) {
      const roomId = parts[1]!;
      const room = rooms.get(roomId);
      if (!room || room.members.get(caller.userId) !== "join") return matrixError(res, 403, "M_FORBIDDEN", `not in room ${roomId}`);
      if (method === "PUT" && parts[2] === "send" && parts.length === 5) {
        const key = `${token} ${parts[4]}`;
        const existing = txns.get(key);
        if (existing) return json(res, 200, { event_id: existing });
        const eventId = recordSend(roomId, caller.userId, parts[3]!, parts[4]!, (body ?? {}) as Json);
        txns.set(key, eventId);
        return json(res, 200, { event_id: eventId });
      }
      if (method === "PUT" && parts[2] === "typing") {
        const b = (body ?? {}) as { typing?: boolean; timeout?: number };
        typingCalls.push({ roomId, typing: b.typing === true, ...(b.timeout !== undefined ? { timeout: b.timeout } : {}) });
        if (b.typing === true) typing.push(roomId);
        return json(res, 200, {});
      }
      if (method === "PUT" && parts[2] === "redact") {
        const target = messages.find((m) => m.eventId === parts[3]);
        if (target) target.redacted = true;
        const event = append(roomId, { type: "m.room.redaction", sender: MATRIX_BOT.id, content: { redacts: parts[3] } });
        return json(res, 200, { event_id: event.event_id });
      }
      if (method === "GET" && parts[2] === "members") {
        return json(res, 200, { chunk: currentState(roomId).filter((e) => e.type === "m.room.member").map(forClient) });
      }
      if (method === "GET" && parts[2] === "state" && parts.length === 3) return json(res, 200, currentState(roomId).map(forClient));
    }
    unknown.push(`${method} ${path}`);
    return matrixError(res, 404, "M_UNRECOGNIZED", "Unrecognized request");
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { errcode: "M_UNKNOWN", error: String(error) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    messages,
    requests,
    typing,
    typingCalls,
    joins,
    get logins() {
      return logins;
    },
    unknown,
    keys,
    loggedOut,
    roomEvents: (roomId) => log.filter((e) => e.event.room_id === roomId).map((e) => e.event),
    addRoom(roomId, members, name, roomOptions = {}) {
      const creator = members[0] ?? MATRIX_BOT.id;
      createRoom(roomId, creator, name);
      if (roomOptions.encrypted) append(roomId, { type: "m.room.encryption", sender: creator, state_key: "", content: { algorithm: "m.megolm.v1.aes-sha2" } });
      for (const m of members.slice(1)) {
        if (m === MATRIX_BOT.id) joinBot(roomId);
        else member(roomId, m, "join");
      }
      if (creator !== MATRIX_BOT.id) joinBot(roomId);
    },
    addUser(userId, deviceId = `${userId.slice(1).split(":")[0]!.toUpperCase()}DEVICE`) {
      const accessToken = `syt_user_${userId.slice(1).split(":")[0]}_${nextId++}`;
      tokens.set(accessToken, { userId, deviceId, token: accessToken });
      return { accessToken, deviceId };
    },
    invite(roomId, inviter, members = []) {
      createRoom(roomId, inviter);
      for (const m of members) member(roomId, m, "join");
      member(roomId, MATRIX_BOT.id, "invite", inviter);
      invites.set(roomId, { inviter, pos });
      for (const h of [...held]) h.wake();
    },
    userSends(roomId, sender, content, type = "m.room.message") {
      if (!rooms.has(roomId)) throw new Error(`no room ${roomId}`);
      return append(roomId, { type, sender, content }).event_id;
    },
    addMedia(name, mimeType, content) {
      const mxc = `mxc://${MATRIX_SERVER}/media${nextId++}`;
      media.set(mxc, { name, mimeType, data: Buffer.isBuffer(content) ? content : Buffer.from(content) });
      return mxc;
    },
    failNext(route, status, count = 1, body = { errcode: status === 429 ? "M_LIMIT_EXCEEDED" : "M_UNKNOWN", error: "injected failure" }) {
      const [method, pathPattern] = route.split(" ");
      const pattern = new RegExp(`^${method} ${pathPattern!.replace(/[.$^]/g, "\\$&").replace(/\*/g, "[^/]+")}$`);
      for (let i = 0; i < count; i++) failures.push({ pattern, status, body });
    },
    failSyncs(count) {
      syncFailures += count;
    },
    dropSyncs() {
      const cut = [...held].filter((h) => h.caller.userId === MATRIX_BOT.id);
      for (const h of cut) {
        held.delete(h);
        h.cancel();
        streamBroken = true;
        h.res.socket?.destroy();
      }
      return cut.length;
    },
    waitingSyncs: () => [...held].filter((h) => h.caller.userId === MATRIX_BOT.id).length,
    eventPosition: (eventId) => log.find((e) => e.event.event_id === eventId)?.pos,
    sessions: () => sessions,
    revokeToken() {
      for (const [token, c] of tokens) if (c.userId === MATRIX_BOT.id) tokens.delete(token);
    },
    async close() {
      for (const h of held) h.cancel();
      held.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
