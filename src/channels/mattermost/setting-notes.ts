/**
 * Python nanobot keys of `channels.mattermost` that nanobot reads but does not honour, with
 * the reason; `config check` and the gateway's start-up print them. Kept free of the SDK so
 * `config check` does not load it.
 */
export function mattermostSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  const notes: string[] = [];
  if (raw.allowFromMatchMode === "email") {
    notes.push(
      `channels.${name}.allowFromMatchMode "email" is not supported by nanobot's Mattermost channel (a sender's e-mail is not shown to bots on most servers); allowFrom entries are compared as user ids — list user ids or usernames (allowFromMatchMode "username") instead`,
    );
  }
  return notes;
}
