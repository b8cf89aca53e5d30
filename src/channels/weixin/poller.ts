/**
 * The getupdates long poll. Each poll carries the cursor (`get_updates_buf`) and waits up to
 * `pollTimeout` seconds (or what the server suggests in `longpolling_timeout_ms`); a timed-out
 * poll is simply the next one. A failure is retried at once, then after 2 s, and after three in
 * a row after 30 s, on the channel clock. A stale bot token (-14) pauses polling until a new
 * login stores a replacement in account.json.
 */
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { ChannelClock } from "../clock.js";
import { WeixinAuthError, checkBody } from "./api.js";
import type { WeixinApi } from "./api.js";
import type { WeixinMessage } from "./inbound.js";
import type { WeixinSession } from "./session.js";

const RETRY_MS = 2000;
const BACKOFF_MS = 30_000;
const MAX_FAILURES = 3;

export interface WeixinPollerOptions {
  api: WeixinApi;
  session: WeixinSession;
  clock: ChannelClock;
  logger: Logger;
  pollTimeoutS: number;
  onMessage: (message: WeixinMessage) => Promise<void>;
  onState: (connected: boolean, problem?: string) => void;
}

export class WeixinPoller {
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private timeoutS: number;
  private cancelWait: (() => void) | undefined;

  constructor(private readonly options: WeixinPollerOptions) {
    this.timeoutS = options.pollTimeoutS;
  }

  start(): void {
    this.loop = this.run().catch((error: unknown) => {
      this.options.logger.error("weixin polling stopped", { error: errorMessage(error) });
      this.options.onState(false, errorMessage(error));
    });
  }

  async stop(): Promise<void> {
    this.abort.abort();
    this.cancelWait?.();
    await this.loop;
  }

  private get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (ms === 0 || this.stopped) return resolve();
      const cancel = this.options.clock.setTimer(resolve, ms);
      this.cancelWait = () => (cancel(), resolve());
    });
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        await this.pollOnce();
        if (failures > 0) this.options.onState(true);
        failures = 0;
      } catch (error) {
        if (this.stopped) return;
        if (error instanceof Error && error.name === "TimeoutError") continue;
        if (error instanceof WeixinAuthError) {
          if (!(await this.awaitReplacement(error))) return;
          continue;
        }
        failures++;
        this.options.onState(false, errorMessage(error));
        this.options.logger.warn("weixin poll failed", { failures, error: errorMessage(error) });
        await this.wait(failures === 1 ? 0 : failures >= MAX_FAILURES ? BACKOFF_MS : RETRY_MS);
        if (failures >= MAX_FAILURES) failures = 0;
      }
    }
  }

  /**
   * After a stale-token answer: polling pauses until account.json holds a newer token (a
   * `nanobot channels login weixin --force` meanwhile), checked every 30 s. False once stopped.
   */
  private async awaitReplacement(error: WeixinAuthError): Promise<boolean> {
    const { session, api, logger } = this.options;
    let warned = false;
    while (!this.stopped) {
      if (await session.reloadReplacement()) {
        api.setToken(session.token);
        logger.info("weixin picked up the token a new login stored");
        this.options.onState(true);
        return true;
      }
      if (!warned) {
        this.options.onState(false, `${error.message} (WeChat login expired: scan again with \`nanobot channels login weixin --force\`)`);
        logger.error("weixin login expired; polling paused until a new login is stored", { error: error.message });
        warned = true;
      }
      await this.wait(BACKOFF_MS);
    }
    return false;
  }

  private async pollOnce(): Promise<void> {
    const { api, session } = this.options;
    const body = checkBody("getupdates", await api.post("ilink/bot/getupdates", { get_updates_buf: session.cursor }, { timeoutMs: (this.timeoutS + 10) * 1000, signal: this.abort.signal }));
    const suggested = Number(body.longpolling_timeout_ms ?? 0);
    if (suggested > 0) this.timeoutS = Math.max(Math.floor(suggested / 1000), 5);
    const cursor = typeof body.get_updates_buf === "string" ? body.get_updates_buf : "";
    if (cursor && cursor !== session.cursor) {
      session.cursor = cursor;
      await session.save();
    }
    const messages = Array.isArray(body.msgs) ? (body.msgs as WeixinMessage[]) : [];
    for (const message of messages) {
      if (this.stopped) return;
      await this.options.onMessage(message).catch((error: unknown) => this.options.logger.error("weixin message failed", { error: errorMessage(error) }));
    }
  }
}
