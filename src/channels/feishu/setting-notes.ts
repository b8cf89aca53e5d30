/**
 * Python nanobot keys of `channels.feishu` that nanobot reads but does not honour, with the
 * reason; `config check` and the gateway's start-up print them. Kept free of the Lark SDK so
 * `config check` does not load it.
 */
export function feishuSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  const out: string[] = [];
  const at = (key: string): string => `channels.${name}.${key}`;
  if (Array.isArray(raw.instances)) {
    out.push(
      `${at("instances")} is not supported: nanobot runs one Feishu app per channel entry; add another entry (e.g. channels.${name}2 with "type": "feishu") for each app — the list is ignored`,
    );
  }
  // The Python web UI's bookkeeping for several assistants; with their defaults they mean nothing.
  if (raw.instanceId !== undefined && raw.instanceId !== "default") {
    out.push(`${at("instanceId")} is the Python web UI's assistant id; nanobot names a channel by its key (channels.${name}) — it is ignored`);
  }
  if (typeof raw.identityKey === "string" && raw.identityKey !== "") {
    out.push(`${at("identityKey")} is the Python web UI's record of which app paired users belong to; nanobot keeps pairings per channel key — it is ignored`);
  }
  if (raw.name !== undefined && raw.name !== "nanobot") {
    out.push(`${at("name")} is the Python web UI's display name; the bot's name comes from the Feishu app itself — it is ignored`);
  }
  if (typeof raw.verificationToken === "string" && raw.verificationToken !== "") {
    out.push(
      `${at("verificationToken")} is not used: nanobot (as the Python nanobot) receives events over the long connection, which the app secret authenticates, not HTTP callbacks — it is ignored`,
    );
  }
  return out;
}
