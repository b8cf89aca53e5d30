/**
 * The Mattermost WebSocket (`/api/v4/websocket`), spoken with `ws`. @mattermost/client's
 * WebSocketClient is written for browsers: it reads the globals `WebSocket.OPEN` and
 * `CloseEvent`, which Node 20 does not have, so its every send throws. This client keeps to
 * the same wire protocol: the token in the upgrade's Authorization header and again as an
 * `authentication_challenge` action, the `hello` event that carries the connection id,
 * server events with an increasing `seq`, `ping` actions answered by `pong`, and actions such
 * as `user_typing`. A lost connection is retried at once, then after 1 s, 2 s … 30 s.
 */
import WebSocket from "ws";
import type { RawData } from "ws";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { ChannelClock } from "../clock.js";

/** A server-sent event as Mattermost frames it. */
export interface MattermostEvent {
  event: string;
  data: Record<string, unknown>;
  broadcast?: { channel_id?: string; team_id?: string; user_id?: string };
  seq: number;
}

export interface EventSocketOptions {
  url: string;
  token: string;
  clock: ChannelClock;
  logger: Logger;
  onEvent: (event: MattermostEvent) => void;
  /** Connected (hello received) or lost, with the reason. */
  onState: (connected: boolean, problem?: string) => void;
  /** How often the server is pinged; no pong by the next ping means the connection is dead. */
  pingIntervalMs?: number;
}

const MAX_RETRY_MS = 30_000;

/** The wait before connection attempt `failures + 1` (the first retry goes at once). */
export function retryDelayMs(failures: number): number {
  return failures === 0 ? 0 : Math.min(1000 * 2 ** (failures - 1), MAX_RETRY_MS);
}

export class EventSocket {
  private socket: WebSocket | undefined;
  private stopped = false;
  private failures = 0;
  private actionSeq = 1;
  private expectedSeq = 0;
  private connectionId = "";
  private awaitingPong = false;
  private cancelPing: (() => void) | undefined;
  private cancelRetry: (() => void) | undefined;
  private firstHello: { resolve: () => void; reject: (error: Error) => void } | undefined;

  constructor(private readonly options: EventSocketOptions) {}

  /** Connects; resolves on the first `hello`, rejects if that first connection fails. */
  start(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.stop();
        reject(new Error("mattermost start aborted"));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.firstHello = {
        resolve: () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
        reject: (error) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      this.connect();
    });
  }

  stop(): void {
    this.stopped = true;
    this.cancelPing?.();
    this.cancelRetry?.();
    const socket = this.socket;
    this.socket = undefined;
    socket?.removeAllListeners();
    socket?.on("error", () => undefined);
    socket?.terminate();
  }

  /** Sends an action; dropped (false) when the socket is not open. */
  send(action: string, data: unknown): boolean {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return false;
    socket.send(JSON.stringify({ action, seq: this.actionSeq++, data }));
    return true;
  }

  /** "bot is typing…" in a channel, or in a thread when `parentId` is a root post id. */
  userTyping(channelId: string, parentId = ""): boolean {
    return this.send("user_typing", { channel_id: channelId, parent_id: parentId });
  }

  private connect(): void {
    if (this.stopped) return;
    // The server resumes a connection it still knows (connection_id + next sequence number).
    const query = `connection_id=${encodeURIComponent(this.connectionId)}&sequence_number=${this.expectedSeq}`;
    const socket = new WebSocket(`${this.options.url}?${query}`, { headers: { Authorization: `Bearer ${this.options.token}` } });
    this.socket = socket;
    this.actionSeq = 1;
    let opened = false;
    socket.on("open", () => {
      opened = true;
      this.send("authentication_challenge", { token: this.options.token });
    });
    socket.on("message", (raw: RawData) => this.onMessage(raw));
    socket.on("error", (error) => this.options.logger.debug("mattermost websocket error", { error: errorMessage(error) }));
    socket.on("unexpected-response", (_req, res) => {
      socket.emit("error", new Error(`websocket upgrade refused: HTTP ${res.statusCode}`));
      this.lost(socket, `websocket upgrade refused: HTTP ${res.statusCode}${res.statusCode === 401 ? " (check channels.mattermost.token)" : ""}`);
    });
    socket.on("close", (code) => this.lost(socket, opened ? `websocket closed (code ${code})` : "websocket connection failed"));
  }

  private onMessage(raw: RawData): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(String(raw)) as Record<string, unknown>;
    } catch {
      this.options.logger.warn("mattermost websocket sent invalid JSON");
      return;
    }
    if (typeof message.seq_reply === "number") {
      if (message.status === "FAIL") this.options.logger.warn("mattermost websocket action failed", { error: JSON.stringify(message.error ?? {}) });
      if ((message.data as { text?: unknown } | undefined)?.text === "pong") this.awaitingPong = false;
      return;
    }
    if (typeof message.event !== "string") return;
    const event = message as unknown as MattermostEvent;
    if (event.event === "hello") return this.onHello(event);
    if (typeof event.seq === "number") {
      if (event.seq !== this.expectedSeq) this.options.logger.warn("mattermost events missed", { expected: this.expectedSeq, got: event.seq });
      this.expectedSeq = event.seq + 1;
    }
    this.options.onEvent(event);
  }

  private onHello(event: MattermostEvent): void {
    const id = typeof event.data.connection_id === "string" ? event.data.connection_id : "";
    if (this.connectionId && id !== this.connectionId) this.options.logger.info("mattermost connection not resumed; events sent meanwhile are not replayed");
    if (id !== this.connectionId) this.expectedSeq = 0;
    this.connectionId = id;
    if (typeof event.seq === "number") this.expectedSeq = event.seq + 1;
    this.failures = 0;
    this.schedulePing();
    this.options.onState(true);
    this.firstHello?.resolve();
    this.firstHello = undefined;
  }

  private schedulePing(): void {
    this.cancelPing?.();
    this.awaitingPong = false;
    const socket = this.socket;
    const tick = (): void => {
      if (this.socket !== socket || this.stopped) return;
      if (this.awaitingPong) {
        this.options.logger.warn("mattermost websocket answered no ping; reconnecting");
        socket?.terminate();
        return;
      }
      this.awaitingPong = true;
      this.send("ping", null);
      this.cancelPing = this.options.clock.setTimer(tick, this.options.pingIntervalMs ?? 30_000);
    };
    this.cancelPing = this.options.clock.setTimer(tick, this.options.pingIntervalMs ?? 30_000);
  }

  private lost(socket: WebSocket, problem: string): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    this.cancelPing?.();
    socket.removeAllListeners();
    socket.on("error", () => undefined);
    socket.terminate();
    if (this.stopped) return;
    if (this.firstHello) {
      this.firstHello.reject(new Error(`mattermost: ${problem}`));
      this.firstHello = undefined;
      this.stopped = true;
      return;
    }
    this.options.onState(false, problem);
    const delay = retryDelayMs(this.failures++);
    if (delay === 0) {
      const timer = setImmediate(() => this.connect());
      this.cancelRetry = () => clearImmediate(timer);
      return;
    }
    this.cancelRetry = this.options.clock.setTimer(() => this.connect(), delay);
  }
}
