/**
 * The chat channel types nanobot has, and the check that a configured channel is one of them.
 * Kept apart from the factories so `config check` and `status` can name a channel nanobot
 * cannot start (a Python config's `discord`, a typo such as `telegarm`) without loading the
 * channel implementations.
 */
import { closestKey } from "../config/suggest.js";
import { dingtalkSettingNotes } from "./dingtalk/setting-notes.js";
import { discordSettingNotes } from "./discord/setting-notes.js";
import { feishuSettingNotes } from "./feishu/setting-notes.js";
import { matrixSettingNotes } from "./matrix/setting-notes.js";
import { mattermostSettingNotes } from "./mattermost/setting-notes.js";
import { napcatSettingNotes } from "./napcat/setting-notes.js";
import { msteamsSettingNotes } from "./msteams/setting-notes.js";
import { qqSettingNotes } from "./qq/setting-notes.js";
import { signalSettingNotes } from "./signal/setting-notes.js";
import { slackSettingNotes } from "./slack/setting-notes.js";
import { wecomSettingNotes } from "./wecom/setting-notes.js";
import { weixinSettingNotes } from "./weixin/setting-notes.js";
import { whatsappSettingNotes } from "./whatsapp/setting-notes.js";

/** Must match the keys of `defaultChannelFactories()` (a test holds them together). */
export const CHANNEL_TYPES = ["telegram", "websocket", "email", "discord", "dingtalk", "wecom", "slack", "feishu", "msteams", "mattermost", "qq", "matrix", "signal", "whatsapp", "napcat", "weixin"] as const;

/**
 * The Python nanobot's switches that sit directly under `channels`, beside the channel
 * entries; they are settings, not channels.
 */
export const CHANNEL_SWITCHES: ReadonlySet<string> = new Set([
  "sendProgress",
  "sendToolHints",
  "showReasoning",
  "extractDocumentText",
  "sendMaxRetries",
  "transcriptionProvider",
  "transcriptionLanguage",
]);

/** Channels of the Python nanobot that nanobot (TS) does not have. */
const PYTHON_ONLY = new Set(["mochat"]);

export interface ChannelTypeProblem {
  name: string;
  type: string;
  message: string;
}

/** Enabled channel entries whose type (`type`, else the name) nanobot has no adapter for. */
export function unknownChannelTypes(channels: Record<string, unknown>): ChannelTypeProblem[] {
  const out: ChannelTypeProblem[] = [];
  for (const [name, raw] of Object.entries(channels)) {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) continue;
    const entry = raw as Record<string, unknown>;
    if (entry.enabled !== true) continue;
    const type = typeof entry.type === "string" ? entry.type : name;
    if ((CHANNEL_TYPES as readonly string[]).includes(type)) continue;
    const where = typeof entry.type === "string" ? `channels.${name}.type "${type}"` : `channels.${name}`;
    const known = `nanobot has ${CHANNEL_TYPES.join(", ")}`;
    const guess = closestKey(type, CHANNEL_TYPES);
    const why = guess
      ? `is not a channel type (did you mean "${guess}"?)`
      : PYTHON_ONLY.has(type)
        ? `is a Python nanobot channel that nanobot (TS) does not have (${known})`
        : `is not a channel type (${known})`;
    out.push({ name, type, message: `${where} ${why}; it is enabled but cannot start — fix the name or set enabled: false` });
  }
  return out;
}

/** Whether `status` and the gateway may count this entry as an enabled channel. */
export function isKnownChannelType(name: string, raw: unknown): boolean {
  const type = typeof raw === "object" && raw !== null && typeof (raw as Record<string, unknown>).type === "string" ? String((raw as Record<string, unknown>).type) : name;
  return (CHANNEL_TYPES as readonly string[]).includes(type);
}

/** Keys of enabled channels that nanobot reads but does not honour, each with the reason. */
export function channelSettingNotes(channels: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [name, raw] of Object.entries(channels)) {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) continue;
    const entry = raw as Record<string, unknown>;
    if (entry.enabled !== true) continue;
    const type = typeof entry.type === "string" ? entry.type : name;
    if (type === "discord") out.push(...discordSettingNotes(name, entry));
    if (type === "dingtalk") out.push(...dingtalkSettingNotes(name, entry));
    if (type === "wecom") out.push(...wecomSettingNotes(name, entry));
    if (type === "slack") out.push(...slackSettingNotes(name, entry));
    if (type === "feishu") out.push(...feishuSettingNotes(name, entry));
    if (type === "msteams") out.push(...msteamsSettingNotes(name, entry));
    if (type === "mattermost") out.push(...mattermostSettingNotes(name, entry));
    if (type === "qq") out.push(...qqSettingNotes(name, entry));
    if (type === "matrix") out.push(...matrixSettingNotes(name, entry));
    if (type === "signal") out.push(...signalSettingNotes(name, entry));
    if (type === "whatsapp") out.push(...whatsappSettingNotes(name, entry));
    if (type === "napcat") out.push(...napcatSettingNotes(name, entry));
    if (type === "weixin") out.push(...weixinSettingNotes(name, entry));
  }
  return out;
}
