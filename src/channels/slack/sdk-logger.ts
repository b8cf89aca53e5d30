/**
 * The Slack SDKs log through their own logger interface (console by default). This routes them
 * into nanobot's logger: their chatter (ping/pong, reconnect steps) at debug, their errors as
 * warnings — the channel reports the failures that matter itself.
 */
import type { Logger as SlackLogger, LogLevel } from "@slack/web-api";
import type { Logger } from "../../core/logger.js";

export function slackSdkLogger(log: Logger): SlackLogger {
  const text = (parts: unknown[]): string => parts.map((p) => (typeof p === "string" ? p : String(p))).join(" ");
  return {
    debug: (...msg: unknown[]) => log.debug(text(msg)),
    info: (...msg: unknown[]) => log.debug(text(msg)),
    warn: (...msg: unknown[]) => log.debug(text(msg)),
    error: (...msg: unknown[]) => log.warn(`slack sdk: ${text(msg)}`),
    setLevel: () => undefined,
    // LogLevel.INFO; a type-only import keeps the SDK unloaded until the channel starts.
    getLevel: () => "info" as LogLevel,
    setName: () => undefined,
  };
}
