/** `channels.telegram`: the Telegram-specific keys beside the shared enabled/allowFrom/streaming. */
import { z } from "zod";
import { bool, idString, nonNegativeInt, oneOf, positiveInt, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

export const telegramConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** The BotFather token (`botToken` accepted as the Go-style spelling). */
  token: str().min(1, { error: "expected the bot token" }).optional(),
  botToken: str().optional(),
  allowFrom: z.array(idString(), { error: "expected a list of ids" }).default([]),
  /** Stream replies by editing the message (default on). */
  streaming: bool().default(true),
  /** Bot API base URL; tests and self-hosted Bot API servers change it. */
  apiRoot: str().optional(),
  mode: oneOf(["polling", "webhook"]).default("polling"),
  /** Public URL Telegram should POST updates to (webhook mode); set with setWebhook on start. */
  webhookUrl: str().optional(),
  /** Checked against `X-Telegram-Bot-Api-Secret-Token` on every webhook request. */
  webhookSecret: str().optional(),
  /** "mention": in groups answer only when mentioned or replied to; "open": every message. */
  groupPolicy: oneOf(["mention", "open"]).default("mention"),
  /** Quote the user's message in the reply. */
  replyToMessage: bool().default(false),
  /** Minimum gap between two edits of a streamed reply. */
  streamEditIntervalMs: nonNegativeInt().default(1000),
  /** Send `progress` messages (tool activity) as separate messages. */
  sendProgress: bool().default(false),
  /** Long-poll timeout for getUpdates, in seconds. */
  pollingTimeoutS: positiveInt().default(30),
});

export type TelegramConfig = z.output<typeof telegramConfigSchema> & { token: string };

export function parseTelegramConfig(raw: unknown, name = "telegram"): TelegramConfig {
  const parsed = parseChannelConfig(name, telegramConfigSchema, raw);
  const token = parsed.token ?? parsed.botToken;
  if (!token) {
    const path = `channels.${name}.token`;
    throw new ConfigError(`${path}: expected the bot token`, { path, expected: "the bot token" });
  }
  return { ...parsed, token };
}
