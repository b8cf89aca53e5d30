/**
 * `channels.qq`: the Python nanobot's keys, unmodified (appId, secret, allowFrom, msgFormat,
 * ackMessage, mediaDir, downloadChunkSize, downloadMaxBytes), plus nanobot's own `groupPolicy`,
 * `intents`, and `apiBase` / `tokenUrl` (for self-hosted proxies or test servers).
 */
import { z } from "zod";
import { bool, idString, nonNegativeInt, oneOf, positiveInt, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

/** GROUP_AND_C2C_EVENT (1 << 25): group @-messages, group full messages and C2C messages. */
export const DEFAULT_QQ_INTENTS = 1 << 25;
/** nanobot splits longer replies; QQ documents no exact limit, and long passive replies are refused. */
export const QQ_TEXT_LIMIT = 2000;

export const qqConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** The bot's AppID (q.qq.com → 开发 → 开发设置). */
  appId: idString().optional(),
  /** The bot's AppSecret. */
  secret: str().optional(),
  allowFrom: z.array(idString(), { error: "expected a list of user openids" }).default([]),
  /** "markdown" sends msg_type 2 (needs the markdown permission); "plain" sends text. */
  msgFormat: oneOf(["plain", "markdown"]).default("plain"),
  /** Sent at once as a reply to every accepted message (QQ bots have no typing indicator); "" for none. */
  ackMessage: str().default("⏳ Processing..."),
  /** Where received files go; "" = `<home>/media/<channel>`. */
  mediaDir: str().default(""),
  downloadChunkSize: positiveInt().default(256 * 1024),
  /** Received files larger than this are skipped. */
  downloadMaxBytes: positiveInt().default(200 * 1024 * 1024),
  /** Group messages: "mention" answers @-messages only; "open" also answers every message the group lets the bot see. */
  groupPolicy: oneOf(["mention", "open"]).default("mention"),
  intents: nonNegativeInt().default(DEFAULT_QQ_INTENTS),
  /** OpenAPI base; a self-hosted proxy or test server changes it. */
  apiBase: str().default("https://api.sgroup.qq.com"),
  /** Where the access token comes from; a self-hosted proxy or test server changes it. */
  tokenUrl: str().default("https://bots.qq.com/app/getAppAccessToken"),
  /** Send `progress` messages (tool activity) as separate messages. */
  sendProgress: bool().default(false),
});

export type QQConfig = z.output<typeof qqConfigSchema> & { appId: string; secret: string };

export function parseQQConfig(raw: unknown, name = "qq"): QQConfig {
  const parsed = parseChannelConfig(name, qqConfigSchema, raw);
  for (const key of ["appId", "secret"] as const) {
    if (!parsed[key]) {
      const path = `channels.${name}.${key}`;
      throw new ConfigError(`${path}: expected the bot's ${key === "appId" ? "AppID" : "AppSecret"} (q.qq.com → 开发设置)`, { path, expected: `the ${key}` });
    }
  }
  return { ...parsed, appId: parsed.appId!, secret: parsed.secret!, apiBase: parsed.apiBase.replace(/\/+$/, "") };
}
