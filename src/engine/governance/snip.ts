/**
 * The last resort when the request is still over budget: drop whole turns from the oldest end.
 * System messages are always kept. The cut lands on a user message when the kept tail has one;
 * otherwise a synthetic `(conversation continued)` user message opens the history, because
 * some providers reject a conversation that starts with an assistant message.
 */
import { messageId } from "../../core/ids.js";
import type { Message, UserMessage } from "../../core/messages.js";

export const CONTINUED_TEXT = "(conversation continued)";

export function continuedMessage(): UserMessage {
  return { id: messageId(), role: "user", content: [{ type: "text", text: CONTINUED_TEXT }], meta: { synthetic: true } };
}

function findForward(messages: readonly Message[], from: number, role: Message["role"]): number {
  for (let i = from; i < messages.length; i++) if (messages[i]?.role === role) return i;
  return -1;
}

/**
 * Where the kept history starts, never on a tool result (that would orphan it): the first user
 * message in the tail that fits, else the first assistant message there (a round boundary),
 * else the current turn's user message (older turns still go), else nowhere (-1).
 */
function chooseStart(messages: readonly Message[], cut: number): number {
  const user = findForward(messages, cut, "user");
  if (user >= 0) return user;
  const assistant = findForward(messages, cut, "assistant");
  if (assistant >= 0) return assistant;
  for (let i = Math.min(cut, messages.length) - 1; i >= 0; i--) if (messages[i]?.role === "user") return i;
  return -1;
}

/** Keeps the newest non-system messages that fit `available` tokens, cut at a user turn. */
export function snipHistory(
  messages: readonly Message[],
  tokens: readonly number[],
  available: number,
): { messages: Message[]; snipped: number } {
  let cut = messages.length;
  let used = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Message;
    if (m.role === "system") continue;
    const cost = tokens[i] ?? 0;
    if (used + cost > available) break;
    used += cost;
    cut = i;
  }
  const start = chooseStart(messages, cut);
  if (start < 0) return { messages: [...messages], snipped: 0 };

  const out: Message[] = [];
  let snipped = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Message;
    if (i >= start || m.role === "system") out.push(m);
    else snipped++;
  }
  if (snipped === 0) return { messages: out, snipped };
  const firstOther = out.findIndex((m) => m.role !== "system");
  if (firstOther < 0 || out[firstOther]?.role !== "user") {
    out.splice(firstOther < 0 ? out.length : firstOther, 0, continuedMessage());
  }
  return { messages: out, snipped };
}
