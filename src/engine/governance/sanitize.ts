/**
 * The legality passes of context governance. Each is a pure function from a message list to a
 * message list. They are copy-on-write: when nothing needs fixing (the common case) the input
 * array itself comes back and nothing is allocated, which keeps governance of a 100k-message
 * history to a few linear scans.
 */
import { messageId } from "../../core/ids.js";
import type { AssistantMessage, Message, ToolCallPart, ToolMessage } from "../../core/messages.js";

export const UNAVAILABLE_RESULT = "[Tool result unavailable — call was interrupted or lost]";

const NO_CALLS: readonly ToolCallPart[] = [];
/** `/\S/.test` instead of `trim()`: no string allocated per message on the hot path. */
const NON_BLANK = /\S/;

/** The tool calls of an assistant message, without allocating when there are none. */
function callsOf(message: AssistantMessage): readonly ToolCallPart[] {
  let calls: ToolCallPart[] | undefined;
  for (const p of message.content) if (p.type === "toolCall") (calls ??= []).push(p);
  return calls ?? NO_CALLS;
}

function isValidCall(part: AssistantMessage["content"][number]): boolean {
  return part.type !== "toolCall" || (typeof part.name === "string" && part.name.length > 0);
}

/** The message, a repaired copy, or undefined when it should go. */
function repairAssistant(message: AssistantMessage): AssistantMessage | undefined {
  let meaningful = false;
  let invalid = false;
  for (const p of message.content) {
    if (!isValidCall(p)) invalid = true;
    else if ((p.type === "text" && NON_BLANK.test(p.text)) || p.type === "toolCall" || p.type === "ui") meaningful = true;
  }
  if (!meaningful) return undefined;
  return invalid ? { ...message, content: message.content.filter(isValidCall) } : message;
}

/** Drops assistant messages with nothing to say and tool calls without a usable name. */
export function dropMalformed(messages: readonly Message[]): readonly Message[] {
  let out: Message[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Message;
    const fixed = m.role === "assistant" ? repairAssistant(m) : m;
    if (fixed !== m && !out) out = messages.slice(0, i);
    if (out && fixed) out.push(fixed);
  }
  return out ?? messages;
}

/**
 * Keeps a tool result only inside the run of tool messages right after the assistant message
 * that declared its id, and only once: what every provider accepts.
 */
export function dropOrphanResults(messages: readonly Message[]): readonly Message[] {
  let out: Message[] | undefined;
  const open = new OpenCalls();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Message;
    let keep = true;
    if (m.role === "tool") keep = open.answer(m.toolCallId);
    else open.reset(m.role === "assistant" ? callsOf(m) : NO_CALLS);
    if (!keep && !out) out = messages.slice(0, i);
    else if (keep && out) out.push(m);
  }
  return out ?? messages;
}

/**
 * The calls of the latest assistant message and which have a result yet. Assistant messages
 * carry a handful of calls, so a scan of a reused flag array beats a Set per message.
 */
class OpenCalls {
  calls: readonly ToolCallPart[] = NO_CALLS;
  private answered: boolean[] = [];
  private remaining = 0;

  reset(calls: readonly ToolCallPart[]): void {
    this.calls = calls;
    this.remaining = calls.length;
    if (calls.length > 0) this.answered = new Array<boolean>(calls.length).fill(false);
  }

  /** Marks the call answered; false when the id is not open (undeclared or already answered). */
  answer(id: string): boolean {
    if (this.remaining === 0) return false;
    for (let j = 0; j < this.calls.length; j++) {
      if (!this.answered[j] && this.calls[j]?.id === id) {
        this.answered[j] = true;
        this.remaining--;
        return true;
      }
    }
    return false;
  }

  /** Whether some call still has no result. */
  get pending(): boolean {
    return this.remaining > 0;
  }

  /** Calls still without a result. */
  unanswered(): ToolCallPart[] {
    if (this.remaining === 0) return [];
    return this.calls.filter((_, j) => !this.answered[j]);
  }
}

function unavailable(call: ToolCallPart): ToolMessage {
  return {
    id: messageId(),
    role: "tool",
    toolCallId: call.id,
    toolName: call.name,
    content: [{ type: "text", text: UNAVAILABLE_RESULT }],
    isError: true,
    meta: { synthetic: true },
  };
}

function withUnavailable(out: Message[], calls: readonly ToolCallPart[]): Message[] {
  for (let i = 0; i < calls.length; i++) out.push(unavailable(calls[i]!));
  return out;
}

/** Adds an error result for every call whose result is missing, right after its result block. */
export function backfillMissingResults(messages: readonly Message[]): readonly Message[] {
  let out: Message[] | undefined;
  const open = new OpenCalls();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Message;
    if (m.role === "tool") {
      open.answer(m.toolCallId);
    } else {
      if (open.pending) out = withUnavailable(out ?? messages.slice(0, i), open.unanswered());
      open.reset(m.role === "assistant" ? callsOf(m) : NO_CALLS);
    }
    out?.push(m);
  }
  if (open.pending) out = withUnavailable(out ?? messages.slice(), open.unanswered());
  return out ?? messages;
}

function isEmptyResult(message: ToolMessage): boolean {
  for (const p of message.content) if (p.type !== "text" || NON_BLANK.test(p.text)) return false;
  return true;
}

/** Some providers reject empty tool results; say explicitly that the tool printed nothing. */
export function normalizeEmptyResults(messages: readonly Message[]): readonly Message[] {
  let out: Message[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Message;
    const fixed: Message =
      m.role === "tool" && isEmptyResult(m) ? { ...m, content: [{ type: "text", text: `(${m.toolName} completed with no output)` }] } : m;
    if (fixed !== m && !out) out = messages.slice(0, i);
    out?.push(fixed);
  }
  return out ?? messages;
}
