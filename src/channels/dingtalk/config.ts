/**
 * `channels.dingtalk`: the Python nanobot's keys, unmodified (clientId, clientSecret, allowFrom,
 * groupUserIsolation, disablePrivateChat, allowRemoteMediaRedirects,
 * remoteMediaRedirectAllowedHosts), plus nanobot's own `groupPolicy`, `replyToMessage`,
 * `apiRoot`, `oapiRoot` and `sendProgress`. Keys nanobot reads but does not honour are named by
 * `dingtalkSettingNotes`.
 */
import { z } from "zod";
import { bool, idString, oneOf, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

export const DEFAULT_DINGTALK_API_ROOT = "https://api.dingtalk.com";
export const DEFAULT_DINGTALK_OAPI_ROOT = "https://oapi.dingtalk.com";

export const dingtalkConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** The app's Client ID (AppKey); also the robot code the send APIs ask for. */
  clientId: str().optional(),
  /** The app's Client Secret (AppSecret). */
  clientSecret: str().optional(),
  allowFrom: z.array(idString(), { error: "expected a list of user ids (staff ids)" }).default([]),
  /** Each member of a group chat gets a session of their own instead of one per group. */
  groupUserIsolation: bool().default(false),
  /** Direct messages are refused with a notice; the bot answers in group chats only. */
  disablePrivateChat: bool().default(false),
  /** Python keys for fetching remote media URLs; nanobot does not fetch them (see setting-notes.ts). */
  allowRemoteMediaRedirects: bool().default(false),
  remoteMediaRedirectAllowedHosts: z.array(str(), { error: "expected a list of host names" }).default([]),
  /**
   * "open" (default, as the Python nanobot): every group message DingTalk delivers is answered
   * (DingTalk delivers only messages that @ the robot unless the robot may read all messages);
   * "mention": only messages that @ the robot or quote one of its messages.
   */
  groupPolicy: oneOf(["mention", "open"]).default("open"),
  /**
   * Answer through the asking message's `sessionWebhook` (and @ the asker in groups) instead of
   * the robot send APIs, while that webhook is valid. DingTalk robots cannot quote a message;
   * this is the nearest thing to a threaded reply.
   */
  replyToMessage: bool().default(false),
  /** OpenAPI base (ticket, access token, robot sends, file downloads); for self-hosted or test servers. */
  apiRoot: str().default(DEFAULT_DINGTALK_API_ROOT),
  /** Legacy API base (media upload); for self-hosted or test servers. */
  oapiRoot: str().default(DEFAULT_DINGTALK_OAPI_ROOT),
  /** Send `progress` messages (tool activity) as separate messages. */
  sendProgress: bool().default(false),
});

export type DingTalkConfig = z.output<typeof dingtalkConfigSchema> & { clientId: string; clientSecret: string };

export function parseDingTalkConfig(raw: unknown, name = "dingtalk"): DingTalkConfig {
  const parsed = parseChannelConfig(name, dingtalkConfigSchema, raw);
  for (const key of ["clientId", "clientSecret"] as const) {
    if (!parsed[key]) {
      const path = `channels.${name}.${key}`;
      const what = key === "clientId" ? "the app's Client ID (AppKey)" : "the app's Client Secret (AppSecret)";
      throw new ConfigError(`${path}: expected ${what} from the DingTalk developer console (app → Credentials)`, { path, expected: what });
    }
  }
  return {
    ...parsed,
    clientId: parsed.clientId!,
    clientSecret: parsed.clientSecret!,
    apiRoot: parsed.apiRoot.replace(/\/+$/, ""),
    oapiRoot: parsed.oapiRoot.replace(/\/+$/, ""),
  };
}
