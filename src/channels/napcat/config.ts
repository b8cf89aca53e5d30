/**
 * `channels.napcat`: the Python nanobot's keys, unmodified, with its defaults (wsUrl,
 * accessToken, allowFrom, groupPolicy, groupPolicyOverrides, welcomeNewMembers,
 * maxImageBytes), plus nanobot's `sendProgress`.
 */
import { z } from "zod";
import { bool, positiveInt, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

/**
 * QQ takes long messages, but very long ones are folded or refused by the client; nanobot
 * splits replies at this many characters (the Python nanobot does not split).
 */
export const NAPCAT_TEXT_LIMIT = 3000;

/**
 * When a group message is answered: "mention" (only @-mentions of the bot and replies to it),
 * "open" (every message), or a probability p in [0, 1] for messages that do not address the bot.
 */
const groupPolicy = () => {
  const error = 'expected "mention", "open" or a number between 0 and 1';
  return z.union([z.enum(["mention", "open"], { error }), z.number({ error }).min(0, { error }).max(1, { error })], { error });
};

export type NapcatGroupPolicy = "mention" | "open" | number;

export const napcatConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** NapCat's forward WebSocket server (OneBot v11). */
  wsUrl: str().default("ws://127.0.0.1:3001"),
  /** NapCat's token, sent as `Authorization: Bearer …`; "" for none. */
  accessToken: str().default(""),
  groupPolicy: groupPolicy().default("mention"),
  /** Per-group policy keyed by group id; groups not listed follow `groupPolicy`. */
  groupPolicyOverrides: z.record(z.string(), groupPolicy()).default({}),
  /** A member joining a group is told to the agent as a `[group event]` message. */
  welcomeNewMembers: bool().default(true),
  /** Received images (and files) larger than this are dropped. */
  maxImageBytes: positiveInt().default(20 * 1024 * 1024),
  /** Send `progress` messages (tool activity) as separate messages. */
  sendProgress: bool().default(false),
});

export type NapcatConfig = z.output<typeof napcatConfigSchema>;

export function parseNapcatConfig(raw: unknown, name = "napcat"): NapcatConfig {
  const parsed = parseChannelConfig(name, napcatConfigSchema, raw);
  const url = parsed.wsUrl.trim();
  if (!/^wss?:\/\/[^/]/i.test(url)) {
    const path = `channels.${name}.wsUrl`;
    const got = url ? `, got "${url}"` : "";
    throw new ConfigError(`${path}: expected NapCat's OneBot v11 WebSocket address such as "ws://127.0.0.1:3001"${got}`, { path, expected: "a ws:// or wss:// URL" });
  }
  return { ...parsed, wsUrl: url };
}

/** The policy for one group: its override, else `groupPolicy`. */
export function groupPolicyFor(config: NapcatConfig, groupId: string): NapcatGroupPolicy {
  return config.groupPolicyOverrides[groupId] ?? config.groupPolicy;
}
