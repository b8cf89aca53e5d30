/**
 * Who may talk to the bot on Mattermost. Channels use `allowFrom` (user ids, or usernames
 * with allowFromMatchMode "username"); direct messages follow `dm`: `enabled: false` ignores
 * them, `policy: "open"` admits anyone, otherwise allowFrom plus `dm.allowFrom` — and, when
 * both are empty, unknown senders get a pairing code (nanobot's default; the Python nanobot
 * answers every DM unless `dm.policy` is "allowlist").
 */
import type { MessageBus } from "../../bus/types.js";
import type { Logger } from "../../core/logger.js";
import { AccessControl } from "../access/access-control.js";
import { InboundGate } from "../access/inbound-gate.js";
import type { PairingStore } from "../access/pairing-store.js";
import type { MattermostConfig } from "./config.js";

/** allowFrom entries as AccessControl reads them: usernames become `@name`. */
export function accessEntries(entries: readonly string[], mode: MattermostConfig["allowFromMatchMode"]): string[] {
  if (mode !== "username") return [...entries];
  return entries.map((e) => (e === "*" || e.startsWith("@") ? e : `@${e}`));
}

export interface MattermostGates {
  group: InboundGate;
  dm: InboundGate;
}

export function mattermostGates(name: string, config: MattermostConfig, bus: MessageBus, logger: Logger, store?: PairingStore): MattermostGates {
  const mode = config.allowFromMatchMode;
  const gate = (allowFrom: string[]): InboundGate =>
    new InboundGate({ bus, access: new AccessControl({ channel: name, allowFrom, ...(store ? { store } : {}) }), logger });
  const dmAllow = config.dm.policy === "open" ? ["*"] : accessEntries([...config.allowFrom, ...config.dm.allowFrom], mode);
  return { group: gate(accessEntries(config.allowFrom, mode)), dm: gate(dmAllow) };
}
