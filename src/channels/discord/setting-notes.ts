/**
 * Python nanobot keys of `channels.discord` that nanobot reads but does not honour, with the
 * reason; `config check` and the gateway's start-up print them. Kept free of discord.js so
 * `config check` does not load the SDK.
 */
const PROXY_KEYS = ["proxy", "proxyUsername", "proxyPassword"] as const;

export function discordSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  const set = PROXY_KEYS.filter((key) => raw[key] !== undefined && raw[key] !== null && raw[key] !== "");
  if (set.length === 0) return [];
  return [
    `channels.${name}.${set[0]!} is not supported by nanobot's Discord channel (discord.js cannot send its gateway connection through a proxy); it is ignored — unset ${set.map((k) => `channels.${name}.${k}`).join(", ")}`,
  ];
}
