/**
 * The thread so far, for the first message that pulls the bot into a Slack thread (the Python
 * nanobot's `includeThreadContext`): one line per earlier message, the bot's own marked "bot".
 */
import type { ThreadMessage } from "./send.js";

/** Longer thread messages are cut: the context is a reminder, not a transcript. */
const LINE_LIMIT = 500;

export function threadContext(messages: ThreadMessage[], options: { currentTs: string; botId: string; text: string }): string {
  const lines: string[] = [];
  for (const message of messages) {
    if (message.ts === options.currentTs || message.subtype) continue;
    let text = (message.text ?? "").trim();
    if (options.botId) text = text.replace(new RegExp(`<@${options.botId}>\\s*`, "g"), "").trim();
    if (!text) continue;
    if (text.length > LINE_LIMIT) text = `${text.slice(0, LINE_LIMIT)}…`;
    const sender = message.user ?? message.bot_id ?? "unknown";
    lines.push(`- ${options.botId && sender === options.botId ? "bot" : `<@${sender}>`}: ${text}`);
  }
  if (lines.length === 0) return options.text;
  return `Slack thread context before this mention:\n${lines.join("\n")}\n\nCurrent message:\n${options.text}`;
}
