/**
 * A loopback fake of the Microsoft Teams side of the Bot Framework, from its documented wire
 * format: the Bot Connector (REST v3: send, reply, update, delete activities; attachment views
 * that need the bot's token), the Entra ID v2 token endpoint (client-credentials grant), and
 * the Bot Framework OpenID metadata + JWKS the bot checks inbound tokens against. It also plays
 * the Connector's inbound half: it POSTs activities to the bot's messaging endpoint with a
 * `Authorization: Bearer` JWT signed by its own RSA key (iss api.botframework.com, aud appId,
 * serviceurl claim, key endorsed for "msteams"). Files other than inline images go through
 * the file-consent exchange of `fake-msteams-files.ts`. Everything the bot does is recorded.
 */
import { createSign, generateKeyPairSync, randomUUID } from "node:crypto";
import type { KeyObject } from "node:crypto";
import { Agent, createServer, request } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { CONSENT_CARD, fakeTeamsFiles } from "./fake-msteams-files.js";
import type { TeamsFileSide } from "./fake-msteams-files.js";

export const TEAMS_APP_ID = "00000000-0000-4000-8000-00000000b07a";
export const TEAMS_APP_PASSWORD = "fake-teams-app-secret";
export const TEAMS_TENANT = "11111111-2222-4333-8444-555555555555";
export const TEAMS_BOT = { id: `28:${TEAMS_APP_ID}`, name: "nanobot" };
export const TEAMS_GROUP_CHAT = "19:kit-group@thread.v2";
export const TEAMS_ISSUER = "https://api.botframework.com";

export interface TeamsUser {
  /** The user's Entra object id (what nanobot uses as the sender id). */
  id: string;
  username: string;
}

export interface TeamsSentMessage {
  id: string;
  conversationId: string;
  text: string;
  edits: string[];
  replyTo?: string;
  files: Array<{ name: string; content: string; contentType: string }>;
  deleted: boolean;
}

export interface TeamsRequest {
  method: string;
  path: string;
  authorization?: string;
  body: unknown;
}

export interface UserSaysOptions {
  user: TeamsUser;
  text: string;
  /** A group chat message (else the user's personal chat with the bot). */
  group?: boolean;
  /** Adds an `<at>` mention entity for the bot. */
  mention?: boolean;
  /** The activity this one replies to (a thread reply). */
  replyToId?: string;
  attachment?: { name: string; contentType: string; content: string };
  /** Overrides for the activity (tests of odd payloads). */
  extra?: Record<string, unknown>;
}

export interface DeliverOptions {
  /** The Authorization header to send; default a valid token. `null` sends none. */
  authorization?: string | null;
  /** Claims to change in the default token (aud, iss, exp, serviceurl, …). */
  claims?: Record<string, unknown>;
  /** Sign with a key the JWKS does not publish. */
  foreignKey?: boolean;
}

export interface FakeTeams {
  /** The connector's serviceUrl and the base of every endpoint. */
  url: string;
  /** What `openIdMetadataUrl` points at. */
  openIdMetadataUrl: string;
  /** What `loginUrl` points at (the token endpoint is `{loginUrl}/{tenant}/oauth2/v2.0/token`). */
  loginUrl: string;
  messages: TeamsSentMessage[];
  /** Consent cards, the fake user's answers (`files.answer`) and the finished uploads. */
  files: TeamsFileSide;
  requests: TeamsRequest[];
  /** Conversation ids a typing activity was sent to. */
  typing: string[];
  /** Token requests (form fields) the bot made. */
  tokenRequests: Array<Record<string, string>>;
  /** Where the bot listens; set before delivering. */
  setBotEndpoint(url: string): void;
  dmConversation(user: TeamsUser): string;
  /** Builds and delivers a user's message; resolves to the activity id once the bot answered 2xx. */
  userSays(options: UserSaysOptions): Promise<string>;
  /** POSTs an activity to the bot; resolves to the HTTP status. */
  deliver(activity: Record<string, unknown>, options?: DeliverOptions): Promise<number>;
  /** Serves a file at a pre-authenticated download link (as Teams' file `downloadUrl`). */
  shareFile(content: string, contentType: string): string;
  /** Delivers the last delivered activity again (the Connector retrying a cut request). */
  redeliverLast(): Promise<number>;
  /** A signed token as the Connector would send it. */
  token(claims?: Record<string, unknown>, foreignKey?: boolean): string;
  /** The next `count` requests to `METHOD /path-pattern` fail with `status` (`:id` matches a segment; 429 says `Retry-After: 2`). */
  failNext(route: string, status: number, count?: number): void;
  /** TCP connections the fake Connector opened to the bot's endpoint. */
  botConnections(): number;
  /** Restarts the fake's server on the same port and drops every socket both ways. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString("base64url");
}

type KeyPair = { publicKey: KeyObject; privateKey: KeyObject };
let keys: { key: KeyPair; foreign: KeyPair } | undefined;

/** RSA keys are slow to make on a loaded machine: one pair (and a stranger's) per test file. */
function signingKeys(): { key: KeyPair; foreign: KeyPair } {
  keys ??= { key: generateKeyPairSync("rsa", { modulusLength: 2048 }), foreign: generateKeyPairSync("rsa", { modulusLength: 2048 }) };
  return keys;
}

export async function startFakeTeams(): Promise<FakeTeams> {
  const { key, foreign } = signingKeys();
  const kid = "fake-teams-key-1";
  const jwk = key.publicKey.export({ format: "jwk" });
  const messages: TeamsSentMessage[] = [];
  const requests: TeamsRequest[] = [];
  const typing: string[] = [];
  const tokenRequests: Array<Record<string, string>> = [];
  const failures: Array<{ method: string; pattern: RegExp; status: number; left: number }> = [];
  const issuedTokens = new Set<string>();
  const attachments = new Map<string, { content: string; contentType: string }>();
  const sockets = new Set<Socket>();
  let botEndpoint = "";
  let lastDelivered: Record<string, unknown> | undefined;
  let botConnections = 0;
  let agent = newAgent();
  let seq = 0;

  function newAgent(): Agent {
    const a = new Agent({ keepAlive: true, maxSockets: 1 });
    const create = a.createConnection.bind(a);
    a.createConnection = ((...args: Parameters<typeof create>) => {
      botConnections++;
      return create(...args);
    }) as typeof a.createConnection;
    return a;
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => json(res, 500, { error: { code: "ServiceError", message: String(error) } }));
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  function json(res: ServerResponse, status: number, body?: unknown): void {
    if (res.headersSent) return;
    res.writeHead(status, { "content-type": "application/json" });
    res.end(body === undefined ? "" : JSON.stringify(body));
  }

  async function readBody(req: IncomingMessage): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  function failure(method: string, path: string): number | undefined {
    const hit = failures.find((f) => f.left > 0 && f.method === method && f.pattern.test(path));
    if (!hit) return undefined;
    hit.left--;
    return hit.status;
  }

  function authorized(req: IncomingMessage): boolean {
    const header = req.headers.authorization ?? "";
    return header.startsWith("Bearer ") && issuedTokens.has(header.slice(7));
  }

  function fileOf(attachment: Record<string, unknown>): { name: string; content: string; contentType: string } | undefined {
    const uploaded = files.fileFor(attachment);
    if (uploaded) return uploaded;
    const contentUrl = typeof attachment.contentUrl === "string" ? attachment.contentUrl : "";
    const match = /^data:([^;,]+)?;base64,(.*)$/s.exec(contentUrl);
    if (!match) return undefined;
    return { name: String(attachment.name ?? "file"), contentType: String(attachment.contentType ?? match[1] ?? ""), content: Buffer.from(match[2]!, "base64").toString("utf8") };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0]!;
    const method = req.method ?? "GET";
    const bytes = await readBody(req);
    const raw = bytes.toString("utf8");
    let body: unknown = raw;
    if ((req.headers["content-type"] ?? "").includes("json") && raw) body = JSON.parse(raw) as unknown;
    requests.push({ method, path, body, ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });

    if (method === "GET" && path === "/v1/.well-known/openidconfiguration") {
      return json(res, 200, { issuer: TEAMS_ISSUER, authorization_endpoint: `${url}/v1/authorize`, jwks_uri: `${url}/v1/.well-known/keys`, id_token_signing_alg_values_supported: ["RS256"], token_endpoint_auth_methods_supported: ["private_key_jwt"] });
    }
    if (method === "GET" && path === "/v1/.well-known/keys") {
      return json(res, 200, { keys: [{ kty: "RSA", use: "sig", kid, n: jwk.n, e: jwk.e, endorsements: ["msteams"] }] });
    }
    const tokenRoute = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(path);
    if (method === "POST" && tokenRoute) {
      const form = Object.fromEntries(new URLSearchParams(raw));
      tokenRequests.push(form);
      const status = failure(method, path);
      if (status) return json(res, status, { error: "temporarily_unavailable" });
      if (form.grant_type !== "client_credentials" || form.client_id !== TEAMS_APP_ID || form.client_secret !== TEAMS_APP_PASSWORD) {
        return json(res, 401, { error: "invalid_client", error_description: "AADSTS7000215: Invalid client secret provided." });
      }
      if (form.scope !== "https://api.botframework.com/.default") return json(res, 400, { error: "invalid_scope" });
      const token = `fake-app-token-${randomUUID()}`;
      issuedTokens.add(token);
      return json(res, 200, { token_type: "Bearer", expires_in: 3599, ext_expires_in: 3599, access_token: token });
    }
    if (files.handle(method, path, req, bytes, res)) return;
    const attachmentRoute = /^\/v3\/attachments\/([^/]+)\/views\/original$/.exec(path);
    if (method === "GET" && attachmentRoute) {
      if (!authorized(req)) return json(res, 401, { error: { code: "Unauthorized", message: "missing or invalid bot token" } });
      const file = attachments.get(attachmentRoute[1]!);
      if (!file) return json(res, 404, { error: { code: "NotFound" } });
      res.writeHead(200, { "content-type": file.contentType });
      res.end(file.content);
      return;
    }
    const sharedRoute = /^\/shared\/([^/]+)$/.exec(path);
    if (method === "GET" && sharedRoute) {
      // A Teams file download link (SharePoint/OneDrive, pre-authenticated): no token needed.
      const file = attachments.get(sharedRoute[1]!);
      if (!file) return json(res, 404, { error: { code: "NotFound" } });
      res.writeHead(200, { "content-type": file.contentType });
      res.end(file.content);
      return;
    }
    const activityRoute = /^\/v3\/conversations\/([^/]+)\/activities(?:\/([^/]+))?$/.exec(path);
    if (activityRoute) {
      if (!authorized(req)) return json(res, 401, { error: { code: "Unauthorized", message: "missing or invalid bot token" } });
      const status = failure(method, path);
      if (status === 429) {
        res.writeHead(429, { "content-type": "application/json", "retry-after": "2" });
        res.end(JSON.stringify({ error: { code: "Throttled", message: "too many requests" } }));
        return;
      }
      if (status) return json(res, status, { error: { code: "ServiceError", message: "injected failure" } });
      const conversationId = decodeURIComponent(activityRoute[1]!);
      const activityId = activityRoute[2] ? decodeURIComponent(activityRoute[2]) : undefined;
      const activity = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
      if (method === "POST") {
        if (activity.type === "typing") {
          typing.push(conversationId);
          return json(res, 200, {});
        }
        const id = `bot-${++seq}`;
        const replyTo = activityId ?? (typeof activity.replyToId === "string" ? activity.replyToId : undefined);
        const attached = Array.isArray(activity.attachments) ? (activity.attachments as Array<Record<string, unknown>>) : [];
        const sentFiles = attached.map(fileOf).filter((f) => f !== undefined);
        messages.push({ id, conversationId, text: String(activity.text ?? ""), edits: [], files: sentFiles, deleted: false, ...(replyTo ? { replyTo } : {}) });
        json(res, 201, { id });
        for (const card of attached.filter((a) => a.contentType === CONSENT_CARD)) files.onConsentCard(card, id, conversationId);
        return;
      }
      const sent = messages.find((m) => m.id === activityId && m.conversationId === conversationId);
      if (!sent) return json(res, 404, { error: { code: "ActivityNotFound", message: `no activity ${activityId}` } });
      if (method === "PUT") {
        sent.text = String(activity.text ?? "");
        sent.edits.push(sent.text);
        return json(res, 200, { id: sent.id });
      }
      if (method === "DELETE") {
        sent.deleted = true;
        return json(res, 200, {});
      }
    }
    json(res, 404, { error: { code: "NotFound", message: `${method} ${path}` } });
  }

  function token(claims: Record<string, unknown> = {}, foreignKey = false): string {
    const now = Math.floor(Date.now() / 1000);
    const header = { alg: "RS256", typ: "JWT", kid };
    const payload = { iss: TEAMS_ISSUER, aud: TEAMS_APP_ID, serviceurl: url, nbf: now - 60, exp: now + 3600, ...claims };
    const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}`;
    const signature = createSign("RSA-SHA256").update(input).sign(foreignKey ? foreign.privateKey : key.privateKey);
    return `${input}.${b64url(signature)}`;
  }

  function deliver(activity: Record<string, unknown>, options: DeliverOptions = {}): Promise<number> {
    if (!botEndpoint) throw new Error("fake teams: setBotEndpoint() first");
    lastDelivered = activity;
    const body = JSON.stringify(activity);
    const authorization = options.authorization === undefined ? `Bearer ${token(options.claims, options.foreignKey)}` : options.authorization;
    const headers: Record<string, string> = { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) };
    if (authorization !== null) headers.authorization = authorization;
    return new Promise((resolve, reject) => {
      const req = request(botEndpoint, { method: "POST", headers, agent }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  /** Who speaks in each personal chat (the user who answers its consent cards). */
  const dmUsers = new Map<string, TeamsUser>();
  const files = fakeTeamsFiles({
    url,
    deliver: (activity) => deliver(activity),
    addressOf(conversationId) {
      const user = dmUsers.get(conversationId) ?? { id: "aad-unknown", username: "unknown" };
      return {
        serviceUrl: url,
        channelId: "msteams",
        from: { id: `29:${user.username}`, name: user.username, aadObjectId: user.id },
        conversation: { id: conversationId, conversationType: "personal", tenantId: TEAMS_TENANT },
        recipient: { id: TEAMS_BOT.id, name: TEAMS_BOT.name },
        channelData: { tenant: { id: TEAMS_TENANT } },
      };
    },
  });

  const fake: FakeTeams = {
    url,
    openIdMetadataUrl: `${url}/v1/.well-known/openidconfiguration`,
    loginUrl: url,
    messages,
    files,
    requests,
    typing,
    tokenRequests,
    setBotEndpoint(endpoint) {
      botEndpoint = endpoint;
    },
    dmConversation: (user) => `a:dm-${user.username}`,
    async userSays(options) {
      const id = `user-${++seq}`;
      const conversationId = options.group ? TEAMS_GROUP_CHAT : fake.dmConversation(options.user);
      if (!options.group) dmUsers.set(conversationId, options.user);
      let text = options.text;
      const entities: Array<Record<string, unknown>> = [];
      if (options.mention) {
        const at = `<at>${TEAMS_BOT.name}</at>`;
        text = `${at} ${text}`;
        entities.push({ type: "mention", text: at, mentioned: { id: TEAMS_BOT.id, name: TEAMS_BOT.name } });
      }
      const activityAttachments: Array<Record<string, unknown>> = [];
      if (options.attachment) {
        const attachmentId = `att-${seq}`;
        attachments.set(attachmentId, { content: options.attachment.content, contentType: options.attachment.contentType });
        activityAttachments.push({ contentType: options.attachment.contentType, contentUrl: `${url}/v3/attachments/${attachmentId}/views/original`, name: options.attachment.name });
      }
      const activity: Record<string, unknown> = {
        type: "message",
        id,
        timestamp: new Date().toISOString(),
        serviceUrl: url,
        channelId: "msteams",
        from: { id: `29:${options.user.username}`, name: options.user.username, aadObjectId: options.user.id },
        conversation: options.group ? { id: conversationId, conversationType: "groupChat", isGroup: true, tenantId: TEAMS_TENANT } : { id: conversationId, conversationType: "personal", tenantId: TEAMS_TENANT },
        recipient: { id: TEAMS_BOT.id, name: TEAMS_BOT.name },
        text,
        textFormat: "plain",
        entities,
        channelData: { tenant: { id: TEAMS_TENANT } },
        ...(activityAttachments.length ? { attachments: activityAttachments } : {}),
        ...(options.replyToId ? { replyToId: options.replyToId } : {}),
        ...options.extra,
      };
      const status = await deliver(activity);
      if (status < 200 || status >= 300) throw new Error(`the bot answered the activity with HTTP ${status}`);
      return id;
    },
    deliver,
    shareFile(content, contentType) {
      const id = `shared-${++seq}`;
      attachments.set(id, { content, contentType });
      return `${url}/shared/${id}`;
    },
    async redeliverLast() {
      if (!lastDelivered) throw new Error("fake teams: nothing delivered yet");
      return deliver(lastDelivered);
    },
    token,
    failNext(route, status, count = 1) {
      const [method, pattern] = route.split(" ") as [string, string];
      const source = pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:id/g, "[^/]+");
      failures.push({ method, pattern: new RegExp(`^${source}$`), status, left: count });
    },
    botConnections: () => botConnections,
    async restart() {
      agent.destroy();
      agent = newAgent();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", () => {
          server.off("error", reject);
          resolve();
        });
      });
    },
    async close() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
