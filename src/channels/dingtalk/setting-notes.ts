/**
 * Keys of `channels.dingtalk` that nanobot reads but does not honour, with the reason; `config
 * check` and the gateway's start-up print them. Kept free of the SDK so `config check` does not
 * load it.
 */
export function dingtalkSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  const notes: string[] = [];
  const redirects = raw.allowRemoteMediaRedirects === true;
  const hosts = Array.isArray(raw.remoteMediaRedirectAllowedHosts) && raw.remoteMediaRedirectAllowedHosts.length > 0;
  if (redirects || hosts) {
    const key = redirects ? "allowRemoteMediaRedirects" : "remoteMediaRedirectAllowedHosts";
    notes.push(
      `channels.${name}.${key} has no effect in nanobot: its DingTalk channel never downloads a reply's remote media URL (an image URL is handed to DingTalk as is, another URL is sent as a link), so there are no redirects to allow — unset it`,
    );
  }
  if (raw.streaming === true) {
    notes.push(
      `channels.${name}.streaming is not supported by nanobot's DingTalk channel (DingTalk cannot edit a robot message, so a reply cannot be previewed while it is written); replies are sent whole when they are done — unset it`,
    );
  }
  return notes;
}
