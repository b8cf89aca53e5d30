/**
 * `channels.weixin`: the Python nanobot's keys, unmodified, with its defaults (token, allowFrom,
 * baseUrl, cdnBaseUrl, routeTag, stateDir, pollTimeout, sendProgress, sendToolHints,
 * replyProgressMessages, replyProgressMaxMessages, contextMessageBudget, streaming,
 * blockStreaming, blockStreamingMinChars, blockStreamingMaxMessages). The token may be left out
 * when `nanobot channels login weixin` stored one in `<stateDir>/account.json`.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { bool, idString, positiveInt, str } from "../../config/schema-primitives.js";
import { parseChannelConfig } from "../channel-config.js";

const bounded = (min: number, max: number) => z.number({ error: `expected an integer from ${min} to ${max}` }).int().min(min).max(max);

export const weixinConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** The bot token a QR login handed out; "" = the one stored in `<stateDir>/account.json`. */
  token: str().default(""),
  allowFrom: z.array(idString(), { error: "expected a list of WeChat user ids" }).default([]),
  baseUrl: str().default("https://ilinkai.weixin.qq.com"),
  cdnBaseUrl: str().default("https://novac2c.cdn.weixin.qq.com/c2c"),
  /** Sent as the `SKRouteTag` header when set. */
  routeTag: z.union([str(), z.number()], { error: "expected a string or a number" }).nullable().optional(),
  /** Where account.json lives; "" = `<nanobot home>/weixin`. */
  stateDir: str().default(""),
  /** Seconds a getupdates long poll may wait (the server may suggest another value). */
  pollTimeout: positiveInt().default(35),
  sendProgress: bool().default(false),
  sendToolHints: bool().default(false),
  replyProgressMessages: bool().default(false),
  replyProgressMaxMessages: bounded(0, 4).default(2),
  /** Messages nanobot sends per inbound context token before it waits for the user to write again. */
  contextMessageBudget: bounded(1, 10).default(8),
  streaming: bool().default(true),
  blockStreaming: bool().default(false),
  blockStreamingMinChars: bounded(200, 1800).default(1200),
  blockStreamingMaxMessages: bounded(1, 4).default(3),
});

export type WeixinConfig = z.output<typeof weixinConfigSchema> & { stateDir: string; baseUrl: string; cdnBaseUrl: string };

function expandHome(path: string): string {
  return path === "~" ? homedir() : path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;
}

export function parseWeixinConfig(raw: unknown, name: string, home: string): WeixinConfig {
  const parsed = parseChannelConfig(name, weixinConfigSchema, raw);
  // replyProgressMessages turns on the progress and tool-hint transport (as the Python nanobot).
  const progress = parsed.replyProgressMessages ? { sendProgress: true, sendToolHints: true } : {};
  return {
    ...parsed,
    ...progress,
    token: parsed.token.trim(),
    baseUrl: parsed.baseUrl.replace(/\/+$/, ""),
    cdnBaseUrl: parsed.cdnBaseUrl.replace(/\/+$/, ""),
    stateDir: parsed.stateDir ? expandHome(parsed.stateDir) : join(home, "weixin"),
  };
}
