/**
 * `channels.msteams`: the Python nanobot's keys, unmodified (appId, appPassword, tenantId,
 * host, port, path, allowFrom, replyInThread, mentionOnlyResponse, validateInboundAuth,
 * refTtlDays, pruneWebChatRefs, pruneNonPersonalRefs, refTouchIntervalS,
 * trustedServiceUrlHosts), plus nanobot's own groupPolicy, streaming, streamEditIntervalMs,
 * sendProgress and the three endpoints (`serviceUrl`, `openIdMetadataUrl`, `loginUrl`) that
 * self-hosted or test servers change.
 */
import { z } from "zod";
import { bool, idString, nonNegativeInt, oneOf, positiveInt, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

/** The Bot Connector hosts a Python config trusts by default (Teams commercial and government clouds). */
export const DEFAULT_TRUSTED_SERVICE_URL_HOSTS = [
  "smba.trafficmanager.net",
  "smba.infra.gcc.teams.microsoft.com",
  "smba.infra.gov.teams.microsoft.us",
  "smba.infra.dod.teams.microsoft.us",
  "*.botframework.com",
];

/** Teams' global Bot Connector; used for a conversation no activity has told us the serviceUrl of. */
export const DEFAULT_SERVICE_URL = "https://smba.trafficmanager.net/teams/";
export const DEFAULT_OPENID_METADATA_URL = "https://login.botframework.com/v1/.well-known/openidconfiguration";
export const DEFAULT_LOGIN_URL = "https://login.microsoftonline.com";

const e = { error: "expected a port number (0-65535; 0 picks a free port)" };

export const msteamsConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** The Azure Bot's Microsoft App ID (Entra app registration → Application (client) ID). */
  appId: str().optional(),
  /** A client secret of that app registration. */
  appPassword: str().optional(),
  /** The app's tenant for a single-tenant bot; empty = multi-tenant (tokens from botframework.com). */
  tenantId: str().default(""),
  /** The messaging endpoint's own listener (the Bot Connector must reach it over HTTPS, e.g. behind a reverse proxy). */
  host: str().default("0.0.0.0"),
  port: z.number(e).int(e).min(0, e).max(65535, e).default(3978),
  path: str().regex(/^\/[^\s?#]*$/, { error: 'expected a path starting with "/" (no query or spaces)' }).default("/api/messages"),
  allowFrom: z.array(idString(), { error: "expected a list of user ids" }).default([]),
  /** Thread each reply to the message that asked (Teams `replyToId`). */
  replyInThread: bool().default(true),
  /** What the agent is told when a message was only the bot's @mention; "" drops such messages. */
  mentionOnlyResponse: str().default("Hi — what can I help with?"),
  /** Check the Bot Framework JWT on every inbound request (turning it off lets anyone post as anyone). */
  validateInboundAuth: bool().default(true),
  /** Stored conversation references older than this are forgotten. */
  refTtlDays: positiveInt().default(30),
  /** Do not keep references to Bot Framework Web Chat conversations. */
  pruneWebChatRefs: bool().default(true),
  /** Do not store group/channel references on disk (they live only while the gateway runs). */
  pruneNonPersonalRefs: bool().default(true),
  /** How often a used reference's timestamp is written back, seconds (0 = on every send). */
  refTouchIntervalS: nonNegativeInt().default(300),
  /** Hosts the bot sends its token to (`*.example.com` for subdomains); other serviceUrls are refused. */
  trustedServiceUrlHosts: z.array(str(), { error: "expected a list of host names" }).default(DEFAULT_TRUSTED_SERVICE_URL_HOSTS),
  /** "mention": in group chats and channels answer only when @mentioned or replied to; "open": every message the bot receives. */
  groupPolicy: oneOf(["mention", "open"]).default("mention"),
  /** Stream replies by editing one message (default on). */
  streaming: bool().default(true),
  /** Minimum gap between two edits of a streamed reply (Teams throttles fast edits). */
  streamEditIntervalMs: positiveInt().default(1500),
  /** Send `progress` messages (tool activity) as separate messages. */
  sendProgress: bool().default(false),
  /** Bot Connector for conversations not yet seen (proactive sends); for self-hosted or test servers. */
  serviceUrl: str().default(DEFAULT_SERVICE_URL),
  /** Where inbound-token signing keys are published; for self-hosted or test servers. */
  openIdMetadataUrl: str().default(DEFAULT_OPENID_METADATA_URL),
  /** Token authority; the app token comes from `{loginUrl}/{tenantId|botframework.com}/oauth2/v2.0/token`. For self-hosted or test servers. */
  loginUrl: str().default(DEFAULT_LOGIN_URL),
});

export type MSTeamsConfig = z.output<typeof msteamsConfigSchema> & { appId: string; appPassword: string };

export function parseMSTeamsConfig(raw: unknown, name = "msteams"): MSTeamsConfig {
  const parsed = parseChannelConfig(name, msteamsConfigSchema, raw);
  for (const key of ["appId", "appPassword"] as const) {
    if (!parsed[key]) {
      const path = `channels.${name}.${key}`;
      const what = key === "appId" ? "the Azure Bot's Microsoft App ID" : "a client secret of the bot's app registration";
      throw new ConfigError(`${path}: expected ${what} (Azure portal → the bot → Configuration)`, { path, expected: what });
    }
  }
  return { ...parsed, appId: parsed.appId!, appPassword: parsed.appPassword! };
}
