/**
 * `channels.mattermost`: the Python nanobot's keys, unmodified (serverUrl, token, teamId,
 * allowFrom, allowFromMatchMode, groupPolicy, groupPolicyInThread, groupAllowFrom,
 * replyInThread, includeThreadContext, threadContextLimit, streaming, streamingMaxChars,
 * reactEmoji, doneEmoji, sendProgress, sendToolHints, dm.{enabled,policy,allowFrom}), plus
 * nanobot's own `url` (an alias of serverUrl), `dmReplyInThread` and `streamEditIntervalMs`.
 * Keys read but not honoured are warned about by `mattermostSettingNotes`.
 */
import { z } from "zod";
import { bool, idString, oneOf, positiveInt, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

/** Mattermost's limit on a post's message (its `MaxMessageLength` is 16383 runes). */
export const MATTERMOST_TEXT_LIMIT = 16383;

const GROUP_POLICIES = ["mention", "open", "allowlist"] as const;

const dmSchema = z.looseObject({
  /** false: direct messages are ignored. */
  enabled: bool().default(true),
  /** "allowlist": only allowFrom/dm.allowFrom (and approved pairings); "open": anyone who writes. */
  policy: oneOf(["open", "allowlist"]).optional(),
  allowFrom: z.array(idString(), { error: "expected a list of user ids" }).default([]),
});

export const mattermostConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** The server's base URL, e.g. https://chat.example.com (no /api/v4). */
  serverUrl: str().optional(),
  /** nanobot's alias of `serverUrl`. */
  url: str().optional(),
  /** The bot account's access token (Integrations → Bot Accounts). */
  token: str().optional(),
  /** Only channels of this team are answered (direct messages always are); "" = every team. */
  teamId: str().default(""),
  allowFrom: z.array(idString(), { error: "expected a list of user ids" }).default([]),
  /** How allowFrom entries are compared: user ids, or usernames. */
  allowFromMatchMode: oneOf(["id", "username", "email"]).default("id"),
  /** Channel posts: "mention" (answer when @mentioned), "open" (every post), "allowlist" (groupAllowFrom channels). */
  groupPolicy: oneOf(GROUP_POLICIES).default("mention"),
  /** The policy for replies inside a thread; defaults to groupPolicy (as the Python nanobot). */
  groupPolicyInThread: oneOf(GROUP_POLICIES).optional(),
  /** Channel ids answered under groupPolicy "allowlist". */
  groupAllowFrom: z.array(idString(), { error: "expected a list of channel ids" }).default([]),
  /** Answer channel posts in a thread under the asking post. */
  replyInThread: bool().default(true),
  /** nanobot: also thread direct-message replies under the asking post (Python never does). */
  dmReplyInThread: bool().default(false),
  /** On the first mention inside a thread, hand the model the thread's earlier posts. */
  includeThreadContext: bool().default(true),
  threadContextLimit: positiveInt().default(20),
  /** Stream replies by editing one post (default on). */
  streaming: bool().default(true),
  /** Longest streamed preview; the final reply is split at the server's limit. */
  streamingMaxChars: positiveInt().default(16000),
  /** Reaction on an accepted post until the reply is sent; "" for none. */
  reactEmoji: str().default("eyes"),
  /** Reaction put on the asking post once the reply is sent; "" for none. */
  doneEmoji: str().default("white_check_mark"),
  /** Send `progress` messages (tool activity) as separate posts. */
  sendProgress: bool().default(true),
  sendToolHints: bool().default(true),
  dm: dmSchema.default({ enabled: true, allowFrom: [] }),
  /** Minimum gap between two edits of a streamed reply. */
  streamEditIntervalMs: positiveInt().default(1000),
});

export type MattermostConfig = z.output<typeof mattermostConfigSchema> & {
  serverUrl: string;
  token: string;
  groupPolicyInThread: (typeof GROUP_POLICIES)[number];
};

export function parseMattermostConfig(raw: unknown, name = "mattermost"): MattermostConfig {
  const parsed = parseChannelConfig(name, mattermostConfigSchema, raw);
  const serverUrl = (parsed.serverUrl || parsed.url || "").replace(/\/+$/, "");
  if (!serverUrl) {
    const path = `channels.${name}.serverUrl`;
    throw new ConfigError(`${path}: expected the Mattermost server URL (e.g. "https://chat.example.com")`, { path, expected: "the server URL" });
  }
  if (!/^https?:\/\//.test(serverUrl)) {
    const path = `channels.${name}.serverUrl`;
    throw new ConfigError(`${path}: expected an http:// or https:// URL, got "${serverUrl}"`, { path, expected: "an http(s) URL" });
  }
  if (!parsed.token) {
    const path = `channels.${name}.token`;
    throw new ConfigError(`${path}: expected the bot account's access token (Integrations → Bot Accounts)`, { path, expected: "the bot token" });
  }
  return { ...parsed, serverUrl, token: parsed.token, groupPolicyInThread: parsed.groupPolicyInThread ?? parsed.groupPolicy };
}

/** The WebSocket URL of a server: http(s) becomes ws(s), under /api/v4/websocket. */
export function websocketUrl(serverUrl: string): string {
  return `${serverUrl.replace(/^http/, "ws")}/api/v4/websocket`;
}
