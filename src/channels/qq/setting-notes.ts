/** Python nanobot keys of `channels.qq` that nanobot reads but does not honour, with the reason. */
export function qqSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  if (raw.downloadChunkSize === undefined) return [];
  return [`channels.${name}.downloadChunkSize is not used by nanobot's QQ channel (it reads each file in one piece, up to downloadMaxBytes); it is ignored`];
}
