/**
 * Builds the Signal channel and its two gates. Without the Python `dm` / `group` objects both
 * use the shared `allowFrom` (pairing when empty; unknown senders in groups refused). With them,
 * as the Python nanobot: DMs only when `dm.enabled` (`policy: "open"` admits anyone, else
 * `dm.allowFrom`), groups only when `group.enabled`, and in an admitted group every member may
 * talk (the group id is the allow list). Phone numbers match with or without `+`.
 */
import { AccessControl } from "../access/access-control.js";
import { InboundGate } from "../access/inbound-gate.js";
import type { ChannelFactory } from "../channel-manager.js";
import { parseSignalConfig } from "./config.js";
import { expandIds } from "./ids.js";
import { signalSettingNotes } from "./setting-notes.js";
import { SignalChannel } from "./signal-channel.js";
import type { SignalAccess } from "./signal-channel.js";

export const signalFactory: ChannelFactory = ({ name, raw, shared, deps, pairing }) => {
  const config = parseSignalConfig(raw, name);
  const gate = (list: readonly string[]): { gate: InboundGate; allowFrom: string[] } => {
    const allowFrom = expandIds(list);
    return { gate: new InboundGate({ bus: deps.bus, access: new AccessControl({ channel: name, allowFrom, ...(pairing ? { store: pairing } : {}) }), logger: deps.logger }), allowFrom };
  };
  const { dm, group } = config;
  const access: SignalAccess = {
    dm: !dm ? gate(shared.allowFrom) : !dm.enabled ? undefined : gate(dm.policy === "open" ? ["*"] : [...dm.allowFrom, ...shared.allowFrom]),
    group: !group ? gate(shared.allowFrom) : !group.enabled ? undefined : gate(["*"]),
  };
  for (const note of signalSettingNotes(name, raw)) deps.logger.warn(note);
  return new SignalChannel({ ...deps, name, config, access });
};
