/**
 * A thread's title from its first user message: the first line that says something, without
 * markdown marks, cut at a word near 48 characters. Cheap and deterministic, so every face
 * (CLI, web UI, channels) gets one on the first turn without a model call.
 */
import type { UserMessage } from "../core/index.js";

export const TITLE_MAX_CHARS = 48;

export function titleFromText(text: string): string | undefined {
  const line = text
    .replace(/```[\s\S]*?(```|$)/g, " ")
    .split("\n")
    .map((l) => l.replace(/^\s*(?:#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)]\s+)/, "").replace(/[*_`~]+/g, "").replace(/\s+/g, " ").trim())
    .find((l) => /[\p{L}\p{N}]/u.test(l));
  if (!line) return undefined;
  if (line.length <= TITLE_MAX_CHARS) return line;
  const cut = line.slice(0, TITLE_MAX_CHARS - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space >= TITLE_MAX_CHARS / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, "")}…`;
}

export function titleFromMessage(message: UserMessage): string | undefined {
  const text = message.content.map((p) => (p.type === "text" ? p.text : "")).join("\n");
  return titleFromText(text);
}
