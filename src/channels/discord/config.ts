/**
 * `channels.discord`: the Python nanobot's keys, unmodified (token, allowFrom, allowChannels,
 * intents, groupPolicy, readReceiptEmoji, workingEmoji, workingEmojiDelay, streaming), plus
 * nanobot's own `apiRoot`, `streamEditIntervalMs` and `sendProgress`. The proxy keys are read
 * but refused with a warning (see `discordSettingNotes`).
 */
import { z } from "zod";
import { bool, idString, nonNegativeInt, nonNegativeNumber, oneOf, positiveInt, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

/** GUILDS | GUILD_MESSAGES | DIRECT_MESSAGES | MESSAGE_CONTENT, as the Python nanobot. */
export const DEFAULT_DISCORD_INTENTS = 37377;

export const discordConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** The bot token from the developer portal (Bot → Reset Token). */
  token: str().optional(),
  allowFrom: z.array(idString(), { error: "expected a list of user ids" }).default([]),
  /** Channel ids the bot listens in (a thread counts as its parent channel); empty = all. */
  allowChannels: z.array(idString(), { error: "expected a list of channel ids" }).default([]),
  /** Gateway intents bitfield sent with IDENTIFY. */
  intents: nonNegativeInt().default(DEFAULT_DISCORD_INTENTS),
  /** "mention": in servers answer only when mentioned or replied to; "open": every message. */
  groupPolicy: oneOf(["mention", "open"]).default("mention"),
  /** Reaction put on a message the bot accepted; "" for none. Removed when the reply is sent. */
  readReceiptEmoji: str().default("👀"),
  /** Reaction added after `workingEmojiDelay` seconds while the bot is still working; "" for none. */
  workingEmoji: str().default("🔧"),
  workingEmojiDelay: nonNegativeNumber().default(2),
  /** Stream replies by editing the message (default on). */
  streaming: bool().default(true),
  proxy: str().nullable().optional(),
  proxyUsername: str().nullable().optional(),
  proxyPassword: str().nullable().optional(),
  /** REST base (without `/v10`); tests and API proxies change it. The gateway URL comes from `GET /gateway/bot`. */
  apiRoot: str().optional(),
  /** Minimum gap between two edits of a streamed reply. */
  streamEditIntervalMs: positiveInt().default(1000),
  /** Send `progress` messages (tool activity) as separate messages. */
  sendProgress: bool().default(false),
});

export type DiscordConfig = z.output<typeof discordConfigSchema> & { token: string };

export function parseDiscordConfig(raw: unknown, name = "discord"): DiscordConfig {
  const parsed = parseChannelConfig(name, discordConfigSchema, raw);
  if (!parsed.token) {
    const path = `channels.${name}.token`;
    throw new ConfigError(`${path}: expected the bot token (developer portal → Bot → Reset Token)`, { path, expected: "the bot token" });
  }
  return { ...parsed, token: parsed.token };
}
