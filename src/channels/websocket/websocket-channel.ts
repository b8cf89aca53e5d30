/**
 * The WebSocket channel for the web UI and other clients. It shares the gateway's HTTP server
 * (upgrades on `path`) or listens itself. A connection belongs to one chat at a time: the
 * `?chatId=` it connected with, or the `chatId` of its latest message frame, else its client
 * id (`?clientId=` or a random one), which is also its sender id.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { RawData, WebSocket } from "ws";
import type { OutboundMessage } from "../../bus/types.js";
import { isLoopbackHost } from "../../config/config-helpers.js";
import { ConfigError, errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { Channel, ChannelDeps } from "../types.js";
import { isWildcardHost, presentedToken, tokenMatches } from "./auth.js";
import type { WebSocketConfig } from "./config.js";
import { isValidChatId, outboundFrame, parseClientFrame } from "./frames.js";

export interface WebSocketChannelOptions extends ChannelDeps {
  config: WebSocketConfig;
  name?: string;
  /** Share this server (the gateway's); without it the channel listens on host:port itself. */
  server?: Server;
}

interface Connection {
  socket: WebSocket;
  clientId: string;
  chatId: string;
}

export class WebSocketChannel implements Channel {
  readonly name: string;
  private readonly config: WebSocketConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private readonly shared?: Server;
  private own: Server | undefined;
  private wss: WebSocketServer | undefined;
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
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.config.maxPayload });
    if (this.shared) {
      this.shared.on("upgrade", this.onUpgrade);
      return;
    }
    const server = createServer((_req, res) => {
      res.writeHead(426, { "content-type": "text/plain" }).end("WebSocket upgrade required\n");
    });
    server.on("upgrade", this.onUpgrade);
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
    this.shared?.off("upgrade", this.onUpgrade);
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
    const targets = [...this.connections].filter((c) => c.chatId === message.chatId && c.socket.readyState === c.socket.OPEN);
    const frame = outboundFrame(message);
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

  /** The host the socket is reachable on; undefined when a shared server is not listening yet. */
  private boundHost(): string | undefined {
    if (!this.shared) return this.config.host;
    const address = this.shared.address();
    return address && typeof address === "object" ? address.address : undefined;
  }

  private upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname !== this.config.path) return; // another upgrade listener's path
    const wss = this.wss;
    if (!wss) return void socket.destroy();
    if (this.config.token && !tokenMatches(presentedToken(request, url), this.config.token)) {
      socket.end("HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    const requested = url.searchParams.get("chatId");
    const clientId = url.searchParams.get("clientId");
    if ((requested !== null && !isValidChatId(requested)) || (clientId !== null && !isValidChatId(clientId))) {
      socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, requested ?? undefined, clientId ?? undefined));
  }

  /** `clientId` lets a client (the web UI) keep one sender id across reconnects. */
  private accept(socket: WebSocket, requestedChatId: string | undefined, requestedClientId: string | undefined): void {
    const clientId = requestedClientId ?? randomUUID();
    const conn: Connection = { socket, clientId, chatId: requestedChatId ?? clientId };
    this.connections.add(conn);
    socket.on("close", () => this.connections.delete(conn));
    socket.on("error", (error) => this.log.debug("websocket client error", { error: errorMessage(error) }));
    socket.on("message", (data, isBinary) => {
      this.onFrame(conn, data, isBinary).catch((error: unknown) => {
        this.log.error("websocket inbound failed", { error: errorMessage(error) });
      });
    });
    socket.send(JSON.stringify({ type: "ready", chatId: conn.chatId, clientId }));
  }

  private async onFrame(conn: Connection, data: RawData, isBinary: boolean): Promise<void> {
    if (isBinary) return conn.socket.send(JSON.stringify({ type: "error", error: "binary frames are not supported" }));
    const parsed = parseClientFrame(rawToString(data));
    if (!parsed.ok) return conn.socket.send(JSON.stringify({ type: "error", error: parsed.error }));
    const { frame } = parsed;
    if (frame.chatId) conn.chatId = frame.chatId;
    const chatId = conn.chatId;
    await this.deps.gate.receive(
      {
        id: `${conn.clientId}:${randomUUID()}`,
        chatId,
        sender: { id: conn.clientId },
        content: frame.content,
        isDirect: true,
        ...(frame.media ? { media: frame.media } : {}),
        metadata: { clientId: conn.clientId },
      },
      async (text) => sendFrame(conn.socket, JSON.stringify({ type: "message", id: randomUUID(), chatId, content: text })),
    );
  }
}

function rawToString(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString("utf8");
  return data.toString("utf8");
}

function sendFrame(socket: WebSocket, frame: string): Promise<void> {
  return new Promise((resolve, reject) => socket.send(frame, (error) => (error ? reject(error) : resolve())));
}
