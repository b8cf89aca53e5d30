/** Keys of `channels.napcat` that nanobot reads but cannot honour, with the reason. */
export function napcatSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (raw.streaming === true) {
    out.push(`channels.${name}.streaming cannot show a reply as it grows: OneBot v11 cannot edit a sent message, so the streamed reply is sent once, at its end`);
  }
  return out;
}
