/**
 * `channels.wecom`: the Python nanobot's keys, unmodified (botId, secret, allowFrom,
 * welcomeMessage), plus nanobot's own `groupPolicy`, `wsUrl` and `sendProgress`.
 */
import { z } from "zod";
import { bool, idString, oneOf, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

export const DEFAULT_WECOM_WS_URL = "wss://openws.work.weixin.qq.com";

export const wecomConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** The AI bot's Bot ID (智能机器人 → API 模式 → 长连接). */
  botId: str().optional(),
  /** The AI bot's Secret. */
  secret: str().optional(),
  allowFrom: z.array(idString(), { error: "expected a list of user ids" }).default([]),
  /** Sent when an allowed user opens the direct chat with the bot (WeCom's enter_chat event); "" for none. */
  welcomeMessage: str().default(""),
  /**
   * "open" (default, as the Python nanobot): every group message WeCom delivers (it delivers those
   * that @ the bot); "mention": only messages that start with an @-mention or quote a message.
   */
  groupPolicy: oneOf(["mention", "open"]).default("open"),
  /** The long-connection WebSocket URL; for self-hosted or test servers. */
  wsUrl: str().default(DEFAULT_WECOM_WS_URL),
  /** Send `progress` messages (tool activity) as separate messages. */
  sendProgress: bool().default(false),
});

export type WecomConfig = z.output<typeof wecomConfigSchema> & { botId: string; secret: string };

export function parseWecomConfig(raw: unknown, name = "wecom"): WecomConfig {
  const parsed = parseChannelConfig(name, wecomConfigSchema, raw);
  for (const key of ["botId", "secret"] as const) {
    if (!parsed[key]) {
      const path = `channels.${name}.${key}`;
      const what = key === "botId" ? "the AI bot's Bot ID" : "the AI bot's Secret";
      throw new ConfigError(`${path}: expected ${what} (WeCom admin console → AI bot → API mode, long connection)`, { path, expected: what });
    }
  }
  return { ...parsed, botId: parsed.botId!, secret: parsed.secret! };
}
