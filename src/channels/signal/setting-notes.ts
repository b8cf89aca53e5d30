/**
 * Keys of `channels.signal` that nanobot reads but that have no effect in the config as written,
 * with the reason; `config check` and the gateway's start-up print them.
 */
export function signalSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  const out: string[] = [];
  const group = raw.group;
  const hasGroup = typeof group === "object" && group !== null;
  if (raw.groupMessageBufferSize !== undefined && !hasGroup) {
    out.push(`channels.${name}.groupMessageBufferSize has no effect without channels.${name}.group: the group context is part of the Python-style group policy (set channels.${name}.group.enabled: true)`);
  }
  if (hasGroup && raw.groupPolicy !== undefined) {
    out.push(`channels.${name}.groupPolicy is ignored: channels.${name}.group.requireMention decides when channels.${name}.group is set`);
  }
  const dm = raw.dm;
  if (typeof dm === "object" && dm !== null && Array.isArray(raw.allowFrom) && raw.allowFrom.length > 0 && (dm as Record<string, unknown>).policy === "open") {
    out.push(`channels.${name}.allowFrom does not limit direct messages: channels.${name}.dm.policy is "open"`);
  }
  return out;
}
