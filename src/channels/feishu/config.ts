/**
 * `channels.feishu`: the Python nanobot's keys, unmodified (appId, appSecret, encryptKey,
 * verificationToken, allowFrom, reactEmoji, doneEmoji, toolHintPrefix, groupPolicy,
 * replyToMessage, streaming, domain, topicIsolation), plus nanobot's own `apiRoot`,
 * `streamEditIntervalMs` and `sendProgress`. The Python web UI's bookkeeping keys (instanceId,
 * name, identityKey, instances) are read and warned about (see `feishuSettingNotes`).
 */
import { z } from "zod";
import { bool, idString, oneOf, positiveInt, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

/** The Open Platform base of each `domain` (the SDK's Domain.Feishu / Domain.Lark). */
export const FEISHU_DOMAINS = {
  feishu: "https://open.feishu.cn",
  lark: "https://open.larksuite.com",
} as const;

/**
 * The App ID shape the SDK's long connection insists on: `WSClient.start` refuses any other id
 * silently, so nanobot refuses it at start with the key's name instead.
 */
const APP_ID_PATTERN = /^cli_[0-9a-fA-F]{16}$/;

export const feishuConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** Developer console → Credentials & Basic Info → App ID (`cli_…`). */
  appId: str().optional(),
  /** Developer console → Credentials & Basic Info → App Secret. */
  appSecret: str().optional(),
  /** Events → Encrypt Key: events arrive AES-encrypted when set on the platform. */
  encryptKey: str().default(""),
  /** Events → Verification Token (only HTTP callbacks use it; see the setting notes). */
  verificationToken: str().default(""),
  allowFrom: z.array(idString(), { error: "expected a list of open_ids (ou_…)" }).default([]),
  /** Reaction put on a message the bot accepted (a Feishu emoji_type); "" for none. */
  reactEmoji: str().default("THUMBSUP"),
  /** Reaction put on the message once the reply is sent; null/"" for none. */
  doneEmoji: str().nullable().default(null),
  /** Put before each tool-activity line (`progress` messages). */
  toolHintPrefix: str().default("\u{1F527}"),
  /** "mention": in groups answer only when @mentioned (or replied to); "open": every message. */
  groupPolicy: oneOf(["mention", "open"]).default("mention"),
  /** Quote the asking message in the reply (Feishu's reply API; a topic group stays in its topic). */
  replyToMessage: bool().default(false),
  /** Stream replies by updating one card (default on). */
  streaming: bool().default(true),
  domain: oneOf(["feishu", "lark"]).default("feishu"),
  /** In groups each topic (root message) is its own conversation; false = one per group. */
  topicIsolation: bool().default(true),
  instanceId: z.unknown().optional(),
  name: z.unknown().optional(),
  identityKey: z.unknown().optional(),
  instances: z.unknown().optional(),
  /** Open Platform base URL instead of `domain`'s, for self-hosted or test servers. */
  apiRoot: str().optional(),
  /** Minimum gap between two updates of a streamed reply's card. */
  streamEditIntervalMs: positiveInt().default(500),
  /** Send `progress` messages (tool activity) as separate messages. */
  sendProgress: bool().default(false),
});

export type FeishuConfig = z.output<typeof feishuConfigSchema> & { appId: string; appSecret: string };

export function parseFeishuConfig(raw: unknown, name = "feishu"): FeishuConfig {
  const parsed = parseChannelConfig(name, feishuConfigSchema, raw);
  const appId = parsed.appId?.trim() ?? "";
  if (!appId) throw missing(name, "appId", "the App ID (developer console → Credentials & Basic Info)");
  if (!APP_ID_PATTERN.test(appId)) {
    const path = `channels.${name}.appId`;
    throw new ConfigError(`${path}: expected an App ID such as cli_a1b2c3d4e5f60718 ("cli_" and 16 hex digits), got "${appId}"`, { path, expected: "cli_ and 16 hex digits" });
  }
  if (!parsed.appSecret) throw missing(name, "appSecret", "the App Secret (developer console → Credentials & Basic Info)");
  return { ...parsed, appId, appSecret: parsed.appSecret };
}

/** The base URL the SDK talks to: `apiRoot` when set, else the `domain`'s. */
export function feishuBaseUrl(config: Pick<FeishuConfig, "apiRoot" | "domain">): string {
  return (config.apiRoot ?? FEISHU_DOMAINS[config.domain]).replace(/\/+$/, "");
}

function missing(name: string, key: string, what: string): ConfigError {
  const path = `channels.${name}.${key}`;
  return new ConfigError(`${path}: expected ${what}`, { path, expected: what });
}
