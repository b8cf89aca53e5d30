/**
 * Python nanobot keys of `channels.slack` that nanobot reads but honours differently or not at
 * all, with the reason; `config check` and the gateway's start-up print them. Kept free of the
 * Slack SDK so `config check` does not load it.
 */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function slackSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  const notes: string[] = [];
  const tokenReadOnly = raw.userTokenReadOnly ?? raw.user_token_read_only;
  if (tokenReadOnly !== undefined) {
    notes.push(`channels.${name}.userTokenReadOnly has no effect: nanobot's Slack channel uses no user token (the Python nanobot does not use one either); remove the key`);
  }
  const dm = raw.dm;
  const allowFrom = Array.isArray(raw.allowFrom) ? raw.allowFrom : Array.isArray(raw.allow_from) ? raw.allow_from : [];
  if (isObject(dm) && dm.policy === "open" && !allowFrom.includes("*")) {
    notes.push(
      `channels.${name}.dm.policy "open" admits every direct-message sender in the Python nanobot; nanobot admits only allowFrom and paired senders (an unknown sender gets a pairing code) — set channels.${name}.allowFrom to ["*"] to answer everyone`,
    );
  }
  return notes;
}
