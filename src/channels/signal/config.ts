/**
 * `channels.signal`: the Python nanobot's keys, unmodified — `phoneNumber`, `daemonHost`,
 * `daemonPort`, `groupMessageBufferSize`, `attachmentsDir` and the `dm` / `group` policies —
 * beside nanobot's shared `allowFrom`, `groupPolicy`, `streaming` and `sendProgress`.
 *
 * Both access styles work: without `dm` / `group` the shared keys rule (allowFrom + pairing,
 * groupPolicy mention|open); a Python config's `dm` / `group` objects are honoured as the
 * Python nanobot does (each off unless `enabled`, `policy` open|allowlist, group ids in
 * `group.allowFrom`, `group.requireMention`).
 */
import { z } from "zod";
import { bool, idString, oneOf, port, positiveInt, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

const ids = (what: string) => z.array(idString(), { error: `expected a list of ${what}` }).default([]);

const dmSchema = z.looseObject({
  enabled: bool().default(false),
  /** "open": anyone may write; "allowlist": only `dm.allowFrom` (and approved pairings). */
  policy: oneOf(["open", "allowlist"]).default("allowlist"),
  allowFrom: ids("phone numbers or UUIDs"),
});

const groupSchema = z.looseObject({
  enabled: bool().default(false),
  /** "open": every group the account is in; "allowlist": the group ids in `group.allowFrom`. */
  policy: oneOf(["open", "allowlist"]).default("allowlist"),
  allowFrom: ids("group ids"),
  requireMention: bool().default(true),
});

export const signalConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** The Signal account signal-cli runs (`signal-cli -a +15551234567 daemon --http …`). */
  phoneNumber: str().optional(),
  daemonHost: str().default("localhost"),
  daemonPort: port().default(8080),
  /** Recent group messages kept and handed to the agent as context when it is addressed. */
  groupMessageBufferSize: positiveInt().default(20),
  /** Where signal-cli stores received attachments (default ~/.local/share/signal-cli/attachments). */
  attachmentsDir: str().nullable().optional(),
  dm: dmSchema.optional(),
  group: groupSchema.optional(),
  allowFrom: ids("phone numbers or UUIDs"),
  /** Without a `group` object: "mention" answers group messages that mention or quote the bot; "open" all. */
  groupPolicy: oneOf(["mention", "open"]).default("mention"),
  /** Signal cannot edit without an "edited" mark, so a streamed reply is sent once, at its end. */
  streaming: bool().default(true),
  /** Send `progress` messages (tool activity) as separate messages. */
  sendProgress: bool().default(false),
});

export type SignalConfig = z.output<typeof signalConfigSchema> & { phoneNumber: string };
export type SignalDmConfig = z.output<typeof dmSchema>;
export type SignalGroupConfig = z.output<typeof groupSchema>;

export function parseSignalConfig(raw: unknown, name = "signal"): SignalConfig {
  const parsed = parseChannelConfig(name, signalConfigSchema, raw);
  if (!parsed.phoneNumber?.trim()) {
    const path = `channels.${name}.phoneNumber`;
    throw new ConfigError(`${path}: expected the Signal account's phone number that signal-cli runs (e.g. "+15551234567")`, {
      path,
      expected: "the account's phone number",
    });
  }
  return { ...parsed, phoneNumber: parsed.phoneNumber.trim() };
}

/** The signal-cli daemon's HTTP base URL. */
export function daemonUrl(config: Pick<SignalConfig, "daemonHost" | "daemonPort">): string {
  const host = config.daemonHost.includes(":") && !config.daemonHost.startsWith("[") ? `[${config.daemonHost}]` : config.daemonHost;
  return `http://${host}:${config.daemonPort}`;
}
