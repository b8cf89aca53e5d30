/**
 * A OneBot v11 forward-WebSocket client (NapCat's "WebSocket server"): one socket carries both
 * events (frames with `post_type`) and action calls (`{action, params, echo}` answered by a
 * frame with the same `echo`). The token goes in `Authorization: Bearer …`. Each connection is
 * checked with `get_login_info` (which also tells the bot's QQ number) before it counts as up;
 * events that arrive first are dispatched as usual. A lost connection is retried at once, then
 * after 5 s, 10 s and every 30 s (the Python nanobot's waits) on the channel clock.
 */
import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { ChannelClock } from "../clock.js";

export const ACTION_TIMEOUT_MS = 20_000;

export type OneBotFailure = "failed" | "not_connected" | "disconnected" | "timeout";

/** A failed action call; `reason` tells the caller whether the request may have been carried out. */
export class OneBotError extends Error {
  constructor(
    message: string,
    readonly action: string,
    readonly reason: OneBotFailure,
    readonly retcode?: number,
  ) {
    super(message);
    this.name = "OneBotError";
  }
}

export function reconnectDelayMs(failures: number): number {
  return [0, 5_000, 10_000][failures] ?? 30_000;
}

export interface OneBotClientOptions {
  url: string;
  accessToken: string;
  clock: ChannelClock;
  logger: Logger;
  onEvent: (event: Record<string, unknown>) => void;
  onState: (connected: boolean, problem?: string) => void;
}

interface Pending {
  action: string;
  resolve: (data: unknown) => void;
  reject: (error: Error) => void;
  cancelTimer: () => void;
}

export class OneBotClient {
  /** The bot's QQ number, from `get_login_info` (and every event's `self_id`). */
  selfId: string | undefined;
  private socket: WebSocket | undefined;
  private ready = false;
  private stopped = false;
  private failures = 0;
  private lastProblem: string | undefined;
  private cancelRetry: (() => void) | undefined;
  private readonly pending = new Map<string, Pending>();
  private first: { resolve: () => void; reject: (error: Error) => void } | undefined;

  constructor(private readonly options: OneBotClientOptions) {}

  /** Resolves once the first connection logged in; rejects if it cannot. */
  start(signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.stop();
        reject(new Error("napcat start aborted"));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.first = {
        resolve: () => (signal.removeEventListener("abort", onAbort), resolve()),
        reject: (error) => (signal.removeEventListener("abort", onAbort), reject(error)),
      };
      this.connect();
    });
  }

  stop(): void {
    this.stopped = true;
    this.cancelRetry?.();
    const socket = this.socket;
    this.socket = undefined;
    this.ready = false;
    socket?.removeAllListeners();
    socket?.on("error", () => undefined);
    socket?.terminate();
    this.failPending("stopped");
  }

  /** Calls an action on the connected socket; resolves to the response's `data`. */
  call(action: string, params: Record<string, unknown>): Promise<unknown> {
    const socket = this.socket;
    if (!socket || !this.ready) return Promise.reject(new OneBotError(`napcat: ${action}: not connected`, action, "not_connected"));
    return this.send(socket, action, params);
  }

  private send(socket: WebSocket, action: string, params: Record<string, unknown>): Promise<unknown> {
    const echo = randomUUID();
    return new Promise((resolve, reject) => {
      const cancelTimer = this.options.clock.setTimer(() => {
        this.pending.delete(echo);
        reject(new OneBotError(`napcat: ${action} timed out after ${ACTION_TIMEOUT_MS / 1000} s`, action, "timeout"));
      }, ACTION_TIMEOUT_MS);
      this.pending.set(echo, { action, resolve, reject, cancelTimer });
      socket.send(JSON.stringify({ action, params, echo }), (error) => {
        if (!error) return;
        this.settle(echo)?.reject(new OneBotError(`napcat: ${action}: ${errorMessage(error)}`, action, "not_connected"));
      });
    });
  }

  private settle(echo: string): Pending | undefined {
    const pending = this.pending.get(echo);
    if (!pending) return undefined;
    this.pending.delete(echo);
    pending.cancelTimer();
    return pending;
  }

  private connect(): void {
    if (this.stopped) return;
    const headers = this.options.accessToken ? { Authorization: `Bearer ${this.options.accessToken}` } : undefined;
    const socket = new WebSocket(this.options.url, headers ? { headers } : {});
    this.socket = socket;
    this.ready = false;
    socket.on("open", () => {
      this.send(socket, "get_login_info", {}).then(
        (data) => this.loggedIn(socket, data),
        (error: unknown) => this.lost(socket, `get_login_info failed: ${errorMessage(error)}`),
      );
    });
    socket.on("message", (raw) => this.onFrame(String(raw)));
    socket.on("error", (error) => {
      this.lastProblem = errorMessage(error);
      this.options.logger.debug("napcat socket error", { error: this.lastProblem });
    });
    socket.on("close", (code) => this.lost(socket, this.lastProblem ?? `connection closed (code ${code})`));
  }

  private loggedIn(socket: WebSocket, data: unknown): void {
    if (this.socket !== socket) return;
    const info = (data ?? {}) as { user_id?: unknown; nickname?: unknown };
    if (info.user_id !== undefined && info.user_id !== null) this.selfId = String(info.user_id);
    this.ready = true;
    this.failures = 0;
    this.lastProblem = undefined;
    this.options.logger.info("napcat logged in", { userId: this.selfId, nickname: info.nickname });
    this.options.onState(true);
    this.first?.resolve();
    this.first = undefined;
  }

  private onFrame(raw: string): void {
    let frame: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return;
      frame = parsed as Record<string, unknown>;
    } catch {
      this.options.logger.debug("napcat: dropping a frame that is not JSON");
      return;
    }
    if (frame.post_type === undefined && typeof frame.echo === "string") {
      const pending = this.settle(frame.echo);
      if (!pending) return;
      const retcode = typeof frame.retcode === "number" ? frame.retcode : undefined;
      if ((frame.status !== undefined && frame.status !== "ok") || (retcode !== undefined && retcode !== 0)) {
        const detail = typeof frame.wording === "string" ? frame.wording : typeof frame.message === "string" ? frame.message : "";
        pending.reject(new OneBotError(`napcat: ${pending.action} failed (status ${String(frame.status)}, retcode ${String(retcode)}${detail ? `: ${detail}` : ""})`, pending.action, "failed", retcode));
        return;
      }
      pending.resolve(frame.data);
      return;
    }
    if (frame.self_id !== undefined && frame.self_id !== null) this.selfId = String(frame.self_id);
    if (typeof frame.post_type === "string") this.options.onEvent(frame);
  }

  private failPending(why: string): void {
    for (const [echo, pending] of [...this.pending]) {
      this.settle(echo);
      pending.reject(new OneBotError(`napcat: ${pending.action}: connection ${why} before the answer`, pending.action, "disconnected"));
    }
  }

  private lost(socket: WebSocket, problem: string): void {
    if (this.socket !== socket) return;
    this.socket = undefined;
    this.ready = false;
    this.lastProblem = undefined;
    socket.removeAllListeners();
    socket.on("error", () => undefined);
    socket.terminate();
    this.failPending("lost");
    if (this.stopped) return;
    if (this.first) {
      this.first.reject(new Error(`napcat: ${problem}`));
      this.first = undefined;
      this.stopped = true;
      return;
    }
    this.options.logger.warn("napcat connection lost", { error: problem });
    this.options.onState(false, problem);
    const delay = reconnectDelayMs(this.failures++);
    if (delay === 0) {
      const timer = setImmediate(() => this.connect());
      this.cancelRetry = () => clearImmediate(timer);
      return;
    }
    this.cancelRetry = this.options.clock.setTimer(() => this.connect(), delay);
  }
}
