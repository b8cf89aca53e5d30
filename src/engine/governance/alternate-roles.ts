/**
 * The role-alternation safety net, for every provider: many OpenAI-compatible servers (vLLM,
 * Ollama, GLM, Azure) reject two user or two assistant messages in a row, or a conversation
 * whose first turn is the assistant's. Such histories arise honestly: a process that died
 * mid-turn leaves a user message unanswered, messages injected while a turn ran follow each
 * other, a compaction summary precedes the next question. Runs on the request copy, never on
 * the history. (A request never ends on the assistant here: the loop always adds the turn's
 * input or tool results last.)
 */
import type { AssistantMessage, Message, UserMessage } from "../../core/messages.js";
import { hasToolCalls } from "../../core/message-helpers.js";
import { continuedMessage } from "./snip.js";

/** Text parts of two turns side by side read as one; a blank line keeps them apart. */
const SEPARATOR = { type: "text", text: "\n\n" } as const;

/** The later message's id is kept: it is usually the turn's input, which later steps look for. */
function mergeUsers(a: UserMessage, b: UserMessage): UserMessage {
  return { ...b, content: [...a.content, SEPARATOR, ...b.content] };
}

/** The earlier text goes first; the later message's tool calls (and ids) are kept. */
function mergeAssistants(a: AssistantMessage, b: AssistantMessage): AssistantMessage {
  const text = a.content.filter((p) => p.type === "text");
  return { ...b, content: [...text, ...(text.length ? [SEPARATOR] : []), ...b.content] };
}

export function alternateRoles(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    const last = out.at(-1);
    if (last?.role === "user" && m.role === "user") out[out.length - 1] = mergeUsers(last, m);
    else if (last?.role === "assistant" && m.role === "assistant" && !hasToolCalls(last)) out[out.length - 1] = mergeAssistants(last, m);
    else out.push(m);
  }
  const first = out.findIndex((m) => m.role !== "system");
  if (first >= 0 && out[first]!.role === "assistant") out.splice(first, 0, continuedMessage());
  return out;
}
