/**
 * Keys of `channels.wecom` that nanobot reads but does not honour, with the reason. Kept free of
 * the SDK so `config check` does not load it.
 */
export function wecomSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  if (raw.streaming !== true) return [];
  return [
    `channels.${name}.streaming is not supported by nanobot's WeCom channel (as in the Python nanobot, a reply is sent as one finished stream message when it is done) — unset it`,
  ];
}
