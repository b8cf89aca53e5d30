/**
 * What "a legal provider request" means, checked on the core history after governance, on the
 * Chat Completions messages and on the Anthropic Messages body. Each returns its problems (an
 * empty list means legal) so property failures print what exactly went wrong.
 */
import type { Message } from "../../src/core/messages.js";
import type { AnthropicMessage } from "../../src/providers/anthropic-messages.js";
import type { ChatMessage } from "../../src/providers/chat-messages.js";

/** Core history: results right after their call's assistant message, one per call, no strays. */
export function coreProblems(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  let open = new Set<string>();
  const answered = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role === "tool") {
      if (!open.has(m.toolCallId)) problems.push(`#${i} tool result ${m.toolCallId} without a pending call`);
      open.delete(m.toolCallId);
      if (answered.has(m.toolCallId)) problems.push(`#${i} second result for ${m.toolCallId}`);
      answered.add(m.toolCallId);
      return;
    }
    if (open.size > 0) problems.push(`#${i} ${m.role} while calls ${[...open].join(",")} have no result`);
    open = new Set();
    if (m.role === "assistant") {
      for (const p of m.content) {
        if (p.type !== "toolCall") continue;
        if (open.has(p.id) || answered.has(p.id)) problems.push(`#${i} duplicate call id ${p.id}`);
        open.add(p.id);
      }
    }
  });
  if (open.size > 0) problems.push(`end: calls ${[...open].join(",")} have no result`);
  return problems;
}

/** Chat Completions: system first, tool messages answer the preceding assistant's calls exactly. */
export function chatProblems(messages: readonly ChatMessage[]): string[] {
  const problems: string[] = [];
  let open = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role === "system" && i > 0) problems.push(`#${i} system message after the start`);
    if (m.role === "tool") {
      if (!open.delete(m.tool_call_id)) problems.push(`#${i} tool message ${m.tool_call_id} without a pending call`);
      return;
    }
    if (open.size > 0) problems.push(`#${i} ${m.role} before results of ${[...open].join(",")}`);
    open = new Set();
    if (m.role === "assistant") {
      for (const c of m.tool_calls ?? []) {
        try {
          JSON.parse(c.function.arguments);
        } catch {
          problems.push(`#${i} call ${c.id} arguments are not JSON`);
        }
        open.add(c.id);
      }
    }
  });
  if (open.size > 0) problems.push(`end: calls ${[...open].join(",")} have no result`);
  return problems;
}

/**
 * Anthropic Messages: starts with user, roles alternate, no empty content or empty text block,
 * every `tool_use` answered by a `tool_result` at the start of the next user message and every
 * `tool_result` answering a `tool_use` of the assistant message right before it.
 */
export function anthropicProblems(messages: readonly AnthropicMessage[]): string[] {
  const problems: string[] = [];
  if (messages.length > 0 && messages[0]?.role !== "user") problems.push("first message is not user");
  let pendingUses: string[] = [];
  messages.forEach((m, i) => {
    if (i > 0 && messages[i - 1]?.role === m.role) problems.push(`#${i} two ${m.role} messages in a row`);
    if (m.content.length === 0) problems.push(`#${i} empty content`);
    for (const b of m.content) if (b.type === "text" && b.text === "") problems.push(`#${i} empty text block`);
    if (m.role === "user") {
      const results = m.content.filter((b) => b.type === "tool_result").map((b) => (b as { tool_use_id: string }).tool_use_id);
      const leading = m.content.findIndex((b) => b.type !== "tool_result");
      if (leading !== -1 && m.content.slice(leading).some((b) => b.type === "tool_result")) problems.push(`#${i} tool_result after other content`);
      for (const id of pendingUses) if (!results.includes(id)) problems.push(`#${i} tool_use ${id} has no tool_result`);
      for (const id of results) if (!pendingUses.includes(id)) problems.push(`#${i} tool_result ${id} without tool_use`);
      if (new Set(results).size !== results.length) problems.push(`#${i} repeated tool_result`);
      pendingUses = [];
    } else {
      pendingUses = m.content.filter((b) => b.type === "tool_use").map((b) => (b as { id: string }).id);
      if (new Set(pendingUses).size !== pendingUses.length) problems.push(`#${i} repeated tool_use id`);
    }
  });
  if (pendingUses.length > 0) problems.push(`end: tool_use ${pendingUses.join(",")} unanswered`);
  return problems;
}
