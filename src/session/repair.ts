/**
 * Pure helpers that keep a stored history legal for every wire API: each tool result answers a
 * call of the assistant message right before its block, exactly once, and no call is left
 * without an answer once a turn is closed.
 */
import { assistantMessage, toolMessage } from "../core/index.js";
import type { AssistantMessage, Message, ToolCallPart, ToolMessage } from "../core/index.js";

/** Appended after the user message when a turn fails with a model/provider error. */
export const MODEL_ERROR_MARKER = "[Assistant reply unavailable due to model error.]";
/** The result given to tool calls still running when a turn is stopped. */
export const TOOL_INTERRUPTED = "Error: Task interrupted before this tool finished.";
/** Closes a turn left pending by a crashed process (tool results and/or assistant marker). */
export const TURN_INTERRUPTED = "Error: Task interrupted before a response was generated.";

export interface SanitizeResult {
  kept: Message[];
  /** Tool results removed: orphans, duplicates, answers to calls never declared. */
  dropped: ToolMessage[];
}

/**
 * Drops tool results that do not answer an open call of the nearest preceding assistant
 * message. `openCallIds` seeds the calls already open before `messages` (the stored tail).
 */
export function sanitizeToolResults(messages: readonly Message[], openCallIds: Iterable<string> = []): SanitizeResult {
  let open = new Set(openCallIds);
  const kept: Message[] = [];
  const dropped: ToolMessage[] = [];
  for (const message of messages) {
    if (message.role === "tool") {
      if (open.delete(message.toolCallId)) kept.push(message);
      else dropped.push(message);
      continue;
    }
    // Any other message closes the previous block: late answers become orphans.
    open = new Set(message.role === "assistant" ? callsOf(message).map((c) => c.id) : []);
    kept.push(message);
  }
  return { kept, dropped };
}

/** Calls of the last assistant block that no tool result after it answers. */
export function unansweredToolCalls(messages: readonly Message[]): ToolCallPart[] {
  const answered = new Set<string>();
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role === "tool") {
      answered.add(message.toolCallId);
      continue;
    }
    if (message.role !== "assistant") return [];
    return callsOf(message).filter((c) => !answered.has(c.id));
  }
  return [];
}

/** Error results for `calls`, in call order. */
export function interruptedResults(calls: readonly ToolCallPart[], text: string): ToolMessage[] {
  return calls.map((call) => {
    const result = toolMessage(call.id, call.name, text, true);
    result.meta = { interrupted: true };
    return result;
  });
}

/** An assistant message standing in for a reply that never came. */
export function assistantMarker(text: string, meta: Record<string, unknown>): AssistantMessage {
  const marker = assistantMessage(text);
  marker.meta = { ...meta, marker: true };
  return marker;
}

/**
 * Checks the invariants loadHistory promises after a closed turn; returns the problems found
 * (empty when legal). Used by tests and by `nanobot sessions show --check`-style tooling.
 */
export function historyProblems(messages: readonly Message[]): string[] {
  const problems: string[] = [];
  let open = new Set<string>();
  let declaredInBlock = new Set<string>();
  for (const [i, message] of messages.entries()) {
    if (message.role === "tool") {
      if (!declaredInBlock.has(message.toolCallId)) problems.push(`#${i}: result for undeclared call ${message.toolCallId}`);
      else if (!open.delete(message.toolCallId)) problems.push(`#${i}: duplicate result for ${message.toolCallId}`);
      continue;
    }
    if (open.size) problems.push(`#${i}: calls left unanswered: ${[...open].join(", ")}`);
    const ids = message.role === "assistant" ? callsOf(message).map((c) => c.id) : [];
    open = new Set(ids);
    declaredInBlock = new Set(ids);
  }
  if (open.size) problems.push(`end: calls left unanswered: ${[...open].join(", ")}`);
  return problems;
}

function callsOf(message: AssistantMessage): ToolCallPart[] {
  return message.content.filter((p): p is ToolCallPart => p.type === "toolCall");
}
