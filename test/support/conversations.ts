/**
 * Stored histories the consolidation tests seed. `longConversation`: 10 turns of ~600 words each
 * way, over the 11,400-token history budget of a 20k window (`contextWindowTokens: 20_000,
 * maxTokens: 1_000`), so the next turn summarises the oldest first (two rounds).
 * `shortConversation`: `turns` one-word turns, far under any token budget.
 */
import { assistantMessage, userMessage } from "../../src/core/message-helpers.js";
import type { Message } from "../../src/core/messages.js";

export function longConversation(question = "q", answer = "a"): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < 10; i++) out.push(userMessage(`${question}${i} ${"apple ".repeat(600)}`), assistantMessage(`${answer}${i} ${"pear ".repeat(600)}`));
  return out;
}

export function shortConversation(turns: number): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < turns; i++) out.push(userMessage(`q${i}`), assistantMessage(`a${i}`));
  return out;
}
