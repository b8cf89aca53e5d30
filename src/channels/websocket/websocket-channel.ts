/**
 * The WebSocket channel for the web UI and other clients. It shares the gateway's HTTP server
 * (upgrades on `path`) or listens itself. Either way it is reached through an upgrade router
 * (`gateway/upgrade-router.ts`) that has already refused a foreign `Host` or `Origin` (a web
 * page can open a WebSocket to any address) and answered every other path with 404.
 *
 * Clients are told apart by a server-issued client id (see `client-ids.ts`): a new connection
 * gets one in its `ready` frame, a reconnecting client presents it as `?clientId=` to resume,
 * and one the server did not issue is refused (403). Chats belong to their client: the chat id
 * a client names (`?chatId=`, or the `chatId` of a message frame; `default` otherwise) is a
 * label inside its own space, and on the bus the chat is `<client id>:<label>`, so the session
 * is `websocket:<client id>:<label>` and replies reach only that client's connections. Knowing
 * another client's chat label, or even its public id, opens nothing.
 *
 * On a cluster (workers sharing a PostgreSQL store) every worker runs this channel on its own
 * port, and a reply for a chat whose client has no socket on the worker that produced it (the
 * client reconnected elsewhere, a cron job on the leader) goes over the cluster relay to the
 * workers, which deliver it to the sockets of that chat they hold.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { RawData, WebSocket } from "ws";
import type { OutboundMessage } from "../../bus/types.js";
import { TOPIC_CHANNEL } from "../../cluster/cluster-relay.js";
import { isLoopbackHost } from "../../config/config-helpers.js";
import { ConfigError, errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { localNamesFor } from "../../gateway/host-check.js";
import type { HostPolicy } from "../../gateway/host-check.js";
import { installUpgradeRouter, refuseUpgrade, upgradeRouterOf } from "../../gateway/upgrade-router.js";
import type { Channel, ChannelDeps } from "../types.js";
import { isWildcardHost, presentedToken, tokenMatches } from "./auth.js";
import { ClientIdIssuer } from "./client-ids.js";
import type { WebSocketConfig } from "./config.js";
import { isValidChatId, outboundFrame, parseClientFrame } from "./frames.js";

/** What goes over the cluster relay for a chat whose socket is on another worker. */
interface RelayedOutbound {
  channel: string;
  message: OutboundMessage;
}

/** The chat a connection is in when it names none. */
export const DEFAULT_CHAT = "default";
/** Frames up to this multiple of `maxPayload` are read and answered with an error; bigger ones close the socket (1009). */
const OVERSIZE_READ_FACTOR = 2;

export interface WebSocketChannelOptions extends ChannelDeps {
  config: WebSocketConfig;
  name?: string;
  /** Share this server (the gateway's); without it the channel listens on host:port itself. */
  server?: Server;
}

interface Connection {
  socket: WebSocket;
  /** The public part of the issued client id. */
  clientId: string;
  /** The chat label, scoped to this client. */
  chat: string;
}

export class WebSocketChannel implements Channel {
  readonly name: string;
  private readonly config: WebSocketConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private readonly shared?: Server;
  private own: Server | undefined;
  private wss: WebSocketServer | undefined;
  private issuer: ClientIdIssuer | undefined;
  private unroute: (() => void) | undefined;
  private unrelay: (() => void) | undefined;
  private readonly connections = new Set<Connection>();
  private readonly onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => this.upgrade(request, socket, head);

  constructor(options: WebSocketChannelOptions) {
    this.name = options.name ?? "websocket";
    this.config = options.config;
    this.deps = options;
    this.shared = options.server;
    this.log = options.logger.child({ channel: this.name });
  }

  async start(): Promise<void> {
    if (this.wss) return;
    const host = this.boundHost();
    // Any address other people can reach needs the token: with an empty allowFrom the
    // channel admits every client, so a LAN or public IP must not be open like loopback is.
    if (!this.config.token && host !== undefined && (isWildcardHost(host) || !isLoopbackHost(host))) {
      const path = `channels.${this.name}.token`;
      throw new ConfigError(`${path}: a token is required when listening on ${host || "all interfaces"}`, { path, expected: "a token" });
    }
    this.issuer ??= await ClientIdIssuer.open(this.deps.home, this.name);
    this.unrelay ??= this.deps.relay?.subscribe(TOPIC_CHANNEL, (data) => this.fromCluster(data));
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.config.maxPayload * OVERSIZE_READ_FACTOR });
    if (this.shared) {
      // The gateway's router holds upgrades to the gateway's Host/Origin policy; a bare server
      // (no gateway) gets one with this channel's.
      const router = upgradeRouterOf(this.shared) ?? installUpgradeRouter(this.shared, this.ownPolicy(host ?? "127.0.0.1"));
      this.unroute = router.add(this.config.path, this.onUpgrade);
      return;
    }
    const server = createServer((_req, res) => {
      res.writeHead(426, { "content-type": "text/plain" }).end("WebSocket upgrade required\n");
    });
    installUpgradeRouter(server, this.ownPolicy(this.config.host)).add(this.config.path, this.onUpgrade);
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.config.port, this.config.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.own = server;
  }

  /** The own listener's address (undefined when sharing a server). */
  address(): AddressInfo | undefined {
    const address = this.own?.address();
    return address && typeof address === "object" ? address : undefined;
  }

  async stop(): Promise<void> {
    this.unrelay?.();
    this.unrelay = undefined;
    this.unroute?.();
    this.unroute = undefined;
    for (const conn of this.connections) conn.socket.close(1001, "server shutting down");
    this.connections.clear();
    const wss = this.wss;
    this.wss = undefined;
    if (wss) await new Promise<void>((resolve) => wss.close(() => resolve()));
    const own = this.own;
    this.own = undefined;
    if (own) {
      own.closeAllConnections();
      await new Promise<void>((resolve) => own.close(() => resolve()));
    }
  }

  async send(message: OutboundMessage): Promise<void> {
    const targets = this.localTargets(message.chatId);
    // On a cluster (workers sharing a PostgreSQL store, each running this channel on its own
    // port), a chat with no socket here is sent to the worker that holds one, if any does.
    const relay = this.deps.relay;
    if (targets.length === 0 && relay) {
      relay.publish(TOPIC_CHANNEL, { channel: this.name, message } satisfies RelayedOutbound);
      return;
    }
    const frame = this.frameFor(message);
    const push = async (): Promise<void> => {
      if (targets.length === 0) throw new Error(`no client connected for chat ${message.chatId}`);
      await Promise.all(targets.map((c) => sendFrame(c.socket, frame)));
    };
    if (message.kind === "message" || message.kind === "stream_end") {
      // Not retried: a client that is gone now will not be back within seconds.
      await this.deps.delivery.deliver(`${this.name}:${message.id}`, push, () => ({ retryable: false })).catch((error: unknown) => {
        this.log.info("websocket delivery dropped", { chatId: message.chatId, error: errorMessage(error) });
      });
      return;
    }
    if (targets.length) await push();
  }

  /** A message another worker had no socket for: delivered to this worker's sockets of its chat, if any. */
  private fromCluster(data: unknown): void {
    const relayed = data as Partial<RelayedOutbound> | null;
    const message = relayed?.message;
    if (relayed?.channel !== this.name || !message || typeof message.chatId !== "string") return;
    const targets = this.localTargets(message.chatId);
    if (targets.length === 0) return;
    const frame = this.frameFor(message);
    Promise.all(targets.map((c) => sendFrame(c.socket, frame))).catch((error: unknown) => {
      this.log.info("websocket delivery dropped", { chatId: message.chatId, error: errorMessage(error) });
    });
  }

  /** Open sockets of the bus chat `chatId` (`<client id>:<label>`) on this process. */
  private localTargets(chatId: string): Connection[] {
    const scoped = splitChatId(chatId);
    if (!scoped) return [];
    return [...this.connections].filter((c) => c.clientId === scoped.clientId && c.chat === scoped.chat && c.socket.readyState === c.socket.OPEN);
  }

  /** The client sees its own chat label, not the scoped bus id. */
  private frameFor(message: OutboundMessage): string {
    return outboundFrame({ ...message, chatId: splitChatId(message.chatId)?.chat ?? message.chatId });
  }

  /** Host/Origin policy of a listener this channel owns: loopback, `host`, and the channel's own lists. */
  private ownPolicy(host: string): HostPolicy {
    return { localNames: localNamesFor(host), allowedHosts: this.config.allowedHosts, allowedOrigins: this.config.allowedOrigins };
  }

  /** The host the socket is reachable on; undefined when a shared server is not listening yet. */
  private boundHost(): string | undefined {
    if (!this.shared) return this.config.host;
    const address = this.shared.address();
    return address && typeof address === "object" ? address.address : undefined;
  }

  /** Reached through the upgrade router: Host, Origin and the exact path are already checked. */
  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    // Prefixed, so a path like `//x` cannot read as a URL with a host of its own.
    const url = new URL(`http://localhost${request.url ?? "/"}`);
    const wss = this.wss;
    if (!wss) return refuseUpgrade(socket, 404, "this WebSocket channel is stopped", "not_found");
    if (this.config.token && !tokenMatches(presentedToken(request, url), this.config.token)) {
      refuseUpgrade(socket, 401, "a valid token is required: ?token= or Authorization: Bearer", "invalid_token");
      return;
    }
    const requested = url.searchParams.get("chatId");
    if (requested !== null && !isValidChatId(requested)) {
      refuseUpgrade(socket, 400, "chatId must be 1-128 characters of [A-Za-z0-9_:.@-]", "invalid_chat_id");
      return;
    }
    const issuer = this.issuer;
    if (!issuer) return refuseUpgrade(socket, 404, "this WebSocket channel is stopped", "not_found");
    const presented = url.searchParams.get("clientId");
    let client: { id: string; credential: string };
    if (presented === null) {
      client = issuer.issue();
    } else {
      const id = issuer.verify(presented);
      if (id === undefined) {
        this.log.info("websocket client id refused", { reason: "not issued by this server" });
        refuseUpgrade(socket, 403, "this clientId was not issued by this server; connect without clientId to get a new one", "invalid_client_id");
        return;
      }
      client = { id, credential: presented };
    }
    wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, client, requested ?? DEFAULT_CHAT));
  }

  private accept(socket: WebSocket, client: { id: string; credential: string }, chat: string): void {
    const conn: Connection = { socket, clientId: client.id, chat };
    this.connections.add(conn);
    socket.on("close", () => this.connections.delete(conn));
    socket.on("error", (error) => this.log.debug("websocket client error", { error: errorMessage(error) }));
    socket.on("message", (data, isBinary) => {
      this.onFrame(conn, data, isBinary).catch((error: unknown) => {
        this.log.error("websocket inbound failed", { error: errorMessage(error) });
      });
    });
    // The credential goes to its owner only: it is what resumes this client's chats.
    socket.send(JSON.stringify({ type: "ready", chatId: conn.chat, clientId: client.credential }));
  }

  private async onFrame(conn: Connection, data: RawData, isBinary: boolean): Promise<void> {
    if (isBinary) return conn.socket.send(JSON.stringify({ type: "error", error: "binary frames are not supported" }));
    const size = rawLength(data);
    if (size > this.config.maxPayload) {
      const error = `message too large: ${size} bytes; this server accepts up to ${this.config.maxPayload} bytes per frame (channels.${this.name}.maxPayload)`;
      return conn.socket.send(JSON.stringify({ type: "error", error }));
    }
    const parsed = parseClientFrame(rawToString(data));
    if (!parsed.ok) return conn.socket.send(JSON.stringify({ type: "error", error: parsed.error }));
    const { frame } = parsed;
    if (frame.chatId) conn.chat = frame.chatId;
    const chat = conn.chat;
    await this.deps.gate.receive(
      {
        id: `${conn.clientId}:${randomUUID()}`,
        chatId: scopedChatId(conn.clientId, chat),
        sender: { id: conn.clientId },
        content: frame.content,
        isDirect: true,
        ...(frame.media ? { media: frame.media } : {}),
        metadata: { clientId: conn.clientId },
      },
      async (text) => sendFrame(conn.socket, JSON.stringify({ type: "message", id: randomUUID(), chatId: chat, content: text })),
    );
  }
}

/** The bus chat id of a client's chat: `<client id>:<label>` (client ids hold no colon). */
export function scopedChatId(clientId: string, chat: string): string {
  return `${clientId}:${chat}`;
}

function splitChatId(chatId: string): { clientId: string; chat: string } | undefined {
  const at = chatId.indexOf(":");
  return at > 0 && at < chatId.length - 1 ? { clientId: chatId.slice(0, at), chat: chatId.slice(at + 1) } : undefined;
}

function rawLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((n, b) => n + b.length, 0);
  return data.byteLength;
}

function rawToString(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}

function sendFrame(socket: WebSocket, frame: string): Promise<void> {
  return new Promise((resolve, reject) => socket.send(frame, (error) => (error ? reject(error) : resolve())));
}
