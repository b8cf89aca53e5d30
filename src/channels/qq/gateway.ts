/**
 * The QQ bot WebSocket gateway (Discord-like): HELLO (op 10) with the heartbeat interval,
 * IDENTIFY (op 2) with `QQBot <token>` and the intents, READY with the session id,
 * HEARTBEAT (op 1) with the last sequence → ACK (op 11), dispatches (op 0), RESUME (op 6)
 * after a drop, RECONNECT (op 7) and INVALID SESSION (op 9). A lost connection is retried at
 * once, then after 1 s, 2 s … 60 s on the channel clock.
 */
import WebSocket from "ws";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { ChannelClock } from "../clock.js";
import type { QQApi } from "./api.js";

export interface QQGatewayOptions {
  api: QQApi;
  intents: number;
  clock: ChannelClock;
  logger: Logger;
  onDispatch: (type: string, data: Record<string, unknown>) => void;
  onState: (connected: boolean, problem?: string) => void;
}

export function retryDelayMs(failures: number): number {
  return failures === 0 ? 0 : Math.min(1000 * 2 ** (failures - 1), 60_000);
}

interface Payload {
  op: number;
  d?: unknown;
  s?: number | null;
  t?: string | null;
}

export class QQGateway {
  private socket: WebSocket | undefined;
  private stopped = false;
  private failures = 0;
  private seq: number | null = null;
  private sessionId: string | undefined;
  private cancelHeartbeat: (() => void) | undefined;
  private cancelRetry: (() => void) | undefined;
  private first: { resolve: () => void; reject: (error: Error) => void } | undefined;
  botId = "";

  constructor(private readonly options: QQGatewayOptions) {}

  start(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.stop();
        reject(new Error("qq start aborted"));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.first = {
        resolve: () => (signal.removeEventListener("abort", onAbort), resolve()),
        reject: (error) => (signal.removeEventListener("abort", onAbort), reject(error)),
      };
      void this.connect();
    });
  }

  stop(): void {
    this.stopped = true;
    this.cancelHeartbeat?.();
    this.cancelRetry?.();
    const socket = this.socket;
    this.socket = undefined;
    socket?.removeAllListeners();
    socket?.on("error", () => undefined);
    socket?.terminate();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let url: string;
    let token: string;
    try {
      token = await this.options.api.accessToken();
      url = (await this.options.api.request<{ url: string }>("GET", "/gateway")).url;
    } catch (error) {
      return this.lost(undefined, errorMessage(error));
    }
    if (this.stopped) return;
    const socket = new WebSocket(url);
    this.socket = socket;
    socket.on("message", (raw) => {
      let payload: Payload;
      try {
        payload = JSON.parse(String(raw)) as Payload;
      } catch {
        return;
      }
      this.onPayload(socket, payload, token);
    });
    socket.on("error", (error) => this.options.logger.debug("qq gateway error", { error: errorMessage(error) }));
    socket.on("close", (code) => this.lost(socket, `gateway closed (code ${code})`));
  }

  private send(socket: WebSocket, payload: Payload): void {
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(payload));
  }

  private onPayload(socket: WebSocket, payload: Payload, token: string): void {
    if (typeof payload.s === "number") this.seq = payload.s;
    switch (payload.op) {
      case 10: {
        const interval = Number((payload.d as { heartbeat_interval?: number } | undefined)?.heartbeat_interval ?? 41_250);
        this.heartbeat(socket, interval);
        if (this.sessionId) this.send(socket, { op: 6, d: { token: `QQBot ${token}`, session_id: this.sessionId, seq: this.seq ?? 0 } });
        else this.send(socket, { op: 2, d: { token: `QQBot ${token}`, intents: this.options.intents, shard: [0, 1], properties: {} } });
        return;
      }
      case 0: {
        const data = (payload.d ?? {}) as Record<string, unknown>;
        if (payload.t === "READY") {
          this.sessionId = typeof data.session_id === "string" ? data.session_id : undefined;
          this.botId = String((data.user as { id?: unknown } | undefined)?.id ?? "");
          this.ready();
          return;
        }
        if (payload.t === "RESUMED") return this.ready();
        if (payload.t) this.options.onDispatch(payload.t, data);
        return;
      }
      case 7:
        // The server asks for a reconnect; the session is resumed.
        socket.terminate();
        return;
      case 9:
        // The session cannot be resumed: identify afresh.
        this.sessionId = undefined;
        this.seq = null;
        socket.terminate();
        return;
      default:
        return;
    }
  }

  private ready(): void {
    this.failures = 0;
    this.options.onState(true);
    this.first?.resolve();
    this.first = undefined;
  }

  private heartbeat(socket: WebSocket, interval: number): void {
    this.cancelHeartbeat?.();
    const beat = (): void => {
      if (this.socket !== socket) return;
      this.send(socket, { op: 1, d: this.seq });
      this.cancelHeartbeat = this.options.clock.setTimer(beat, interval);
    };
    this.cancelHeartbeat = this.options.clock.setTimer(beat, interval);
  }

  private lost(socket: WebSocket | undefined, problem: string): void {
    if (socket && this.socket !== socket) return;
    this.socket = undefined;
    this.cancelHeartbeat?.();
    socket?.removeAllListeners();
    socket?.on("error", () => undefined);
    socket?.terminate();
    if (this.stopped) return;
    if (this.first) {
      this.first.reject(new Error(`qq: ${problem}`));
      this.first = undefined;
      this.stopped = true;
      return;
    }
    this.options.onState(false, problem);
    const delay = retryDelayMs(this.failures++);
    if (delay === 0) {
      const timer = setImmediate(() => void this.connect());
      this.cancelRetry = () => clearImmediate(timer);
      return;
    }
    this.cancelRetry = this.options.clock.setTimer(() => void this.connect(), delay);
  }
}
