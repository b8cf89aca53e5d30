/** Python nanobot keys of `channels.weixin` that nanobot reads but does not honour, with the reason. */
export function weixinSettingNotes(name: string, raw: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (raw.replyProgressMessages === true) {
    out.push(
      `channels.${name}.replyProgressMessages: nanobot sends no structured tool-call cards (its progress events carry no tool phases); it turns on sendProgress and sendToolHints, so tool activity arrives as text, and replyProgressMaxMessages is ignored`,
    );
  } else if (raw.replyProgressMaxMessages !== undefined) {
    out.push(`channels.${name}.replyProgressMaxMessages is ignored: it only counts the structured tool-call cards of replyProgressMessages, which nanobot does not send`);
  }
  if (raw.blockStreaming === true && raw.streaming === false) {
    out.push(`channels.${name}.blockStreaming has no effect with channels.${name}.streaming: false (blocks are cut from the streamed reply); the reply is sent once, at its end`);
  }
  return out;
}
