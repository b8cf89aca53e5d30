/**
 * `channels.slack`: the Python nanobot's keys, unmodified (mode, webhookPath, botToken, appToken,
 * userTokenReadOnly, replyInThread, reactEmoji, doneEmoji, includeThreadContext,
 * threadContextLimit, allowFrom, groupPolicy, groupAllowFrom, groupRequireMention, dm), plus
 * nanobot's own `signingSecret` (the Events API over HTTP, which the Python nanobot lacks),
 * `apiRoot`, `streaming`, `streamEditIntervalMs`, `sendProgress` and `dm.replyInThread`.
 */
import { z } from "zod";
import { bool, idString, oneOf, positiveInt, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

export const DEFAULT_SLACK_API_ROOT = "https://slack.com/api/";

const dmSchema = z.looseObject({
  /** False: direct messages are ignored. */
  enabled: bool().default(true),
  /** "open": DMs go through allowFrom and pairing; "allowlist": also `dm.allowFrom` (see setting notes). */
  policy: oneOf(["open", "allowlist"]).default("open"),
  allowFrom: z.array(idString(), { error: "expected a list of Slack user ids" }).default([]),
  /** nanobot's own: thread replies to a top-level direct message too (Slack DMs are not threaded by default). */
  replyInThread: bool().default(false),
});

export const slackConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** "socket": Socket Mode (needs appToken); "http": the Events API posted to the gateway's `webhookPath`. */
  mode: oneOf(["socket", "http"]).default("socket"),
  webhookPath: str().default("/slack/events"),
  /** The bot token (xoxb-…) from OAuth & Permissions. */
  botToken: str().optional(),
  /** The app-level token (xapp-…, scope connections:write) for Socket Mode. */
  appToken: str().optional(),
  /** The signing secret (Basic Information → App Credentials) that signs Events API requests. */
  signingSecret: str().optional(),
  userTokenReadOnly: bool().default(true),
  /** In channels, answer in a thread under the asking message. */
  replyInThread: bool().default(true),
  /** Reaction put on an accepted message (Slack emoji name); "" for none. */
  reactEmoji: str().default("eyes"),
  /** Reaction that replaces `reactEmoji` once the reply is sent; "" for none. */
  doneEmoji: str().default("white_check_mark"),
  /** The first time the bot is addressed inside a thread, hand the model the earlier thread messages. */
  includeThreadContext: bool().default(true),
  threadContextLimit: positiveInt().default(20),
  allowFrom: z.array(idString(), { error: "expected a list of Slack user ids" }).default([]),
  /** "mention": channels answer mentions (and replies in the bot's threads); "open": every message; "allowlist": only `groupAllowFrom` channels. */
  groupPolicy: oneOf(["mention", "open", "allowlist"]).default("mention"),
  groupAllowFrom: z.array(idString(), { error: "expected a list of Slack channel ids" }).default([]),
  /** With groupPolicy "allowlist": answer only mentions in the allowed channels. */
  groupRequireMention: bool().default(false),
  dm: dmSchema.default({ enabled: true, policy: "open", allowFrom: [], replyInThread: false }),
  /** Web API base (for self-hosted or test servers). */
  apiRoot: str().optional(),
  /** Stream replies by editing the message with chat.update (default on). */
  streaming: bool().default(true),
  /** Minimum gap between two edits of a streamed reply (Slack allows about one chat.update per second). */
  streamEditIntervalMs: positiveInt().default(1000),
  /** Send `progress` messages (tool activity) as separate messages. */
  sendProgress: bool().default(false),
});

export type SlackConfig = z.output<typeof slackConfigSchema> & { botToken: string };

function missing(name: string, key: string, what: string): ConfigError {
  const path = `channels.${name}.${key}`;
  return new ConfigError(`${path}: expected ${what}`, { path, expected: what });
}

export function parseSlackConfig(raw: unknown, name = "slack"): SlackConfig {
  const parsed = parseChannelConfig(name, slackConfigSchema, raw);
  if (!parsed.botToken) throw missing(name, "botToken", "the bot token (xoxb-…, Slack app → OAuth & Permissions → Bot User OAuth Token)");
  if (parsed.mode === "socket" && !parsed.appToken) {
    throw missing(name, "appToken", 'the app-level token (xapp-…, Slack app → Basic Information → App-Level Tokens, scope connections:write) for mode "socket"');
  }
  if (parsed.mode === "http" && !parsed.signingSecret) {
    throw missing(name, "signingSecret", 'the signing secret (Slack app → Basic Information → App Credentials) for mode "http"');
  }
  if (parsed.mode === "http" && !parsed.webhookPath.startsWith("/")) {
    const path = `channels.${name}.webhookPath`;
    throw new ConfigError(`${path}: expected a path starting with "/" (got ${JSON.stringify(parsed.webhookPath)})`, { path, expected: "a path starting with /" });
  }
  return { ...parsed, botToken: parsed.botToken };
}
