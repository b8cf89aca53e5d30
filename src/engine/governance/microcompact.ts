/**
 * When the request is over budget, large results of re-runnable tools in the current turn are
 * the cheapest thing to give up: the model can call the tool again. Oldest go first; the ten
 * most recent are kept (Python nanobot's keep-recent rule) so the model never loses what it
 * just read.
 */
import type { Message, ToolMessage } from "../../core/messages.js";
import type { TokenEstimator } from "../tokens/estimator.js";

export const COMPACTABLE_TOOLS: ReadonlySet<string> = new Set([
  "read_file",
  "exec",
  "grep",
  "find_files",
  "web_search",
  "web_fetch",
  "list_dir",
]);
export const MICROCOMPACT_MIN_CHARS = 500;
export const MICROCOMPACT_KEEP_RECENT = 10;

function textLength(message: ToolMessage): number {
  let n = 0;
  for (const p of message.content) if (p.type === "text") n += p.text.length;
  return n;
}

function compacted(message: ToolMessage): ToolMessage {
  return {
    ...message,
    content: [
      { type: "text", text: `Error: result compacted to fit context (re-run ${message.toolName} if needed).` },
    ],
    isError: true,
    meta: { ...message.meta, microcompacted: true },
  };
}

export function lastUserIndex(messages: readonly Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]?.role === "user") return i;
  return -1;
}

/**
 * Replaces in-flight compactable results (≥ 500 chars) oldest first until `total` ≤ `target`.
 * `tokens[i]` is the estimate of `messages[i]`; both arrays are updated in place (they are the
 * governance pipeline's own copies).
 */
export function microcompact(
  messages: Message[],
  tokens: number[],
  total: number,
  target: number,
  estimator: TokenEstimator,
): { total: number; replaced: number } {
  const inFlight: number[] = [];
  for (let i = lastUserIndex(messages) + 1; i < messages.length; i++) {
    const m = messages[i];
    if (m?.role === "tool" && COMPACTABLE_TOOLS.has(m.toolName)) inFlight.push(i);
  }
  const eligible = inFlight.slice(0, Math.max(0, inFlight.length - MICROCOMPACT_KEEP_RECENT));
  let replaced = 0;
  for (const i of eligible) {
    if (total <= target) break;
    const m = messages[i] as ToolMessage;
    if (textLength(m) < MICROCOMPACT_MIN_CHARS) continue;
    const copy = compacted(m);
    const cost = estimator.message(copy);
    total -= (tokens[i] ?? 0) - cost;
    messages[i] = copy;
    tokens[i] = cost;
    replaced++;
  }
  return { total, replaced };
}
