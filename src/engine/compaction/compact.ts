/**
 * Compaction: when the history nears the context window, one summary request (same model, no
 * tools) condenses everything since the last summary, and the history becomes
 * `[system messages] + [summary message] + this turn's input`. The replaced messages are
 * returned for the caller to archive; nothing is deleted.
 */
import { complete, type LanguageModel } from "../../core/llm.js";
import { messageId } from "../../core/ids.js";
import { textOf } from "../../core/message-helpers.js";
import type { Message, UserMessage } from "../../core/messages.js";
import {
  SUMMARY_SYSTEM_PROMPT,
  carryForwardText,
  initialSummaryPrompt,
  recompactionPrompt,
  summaryFromCarryForward,
} from "./prompts.js";

/** Compaction starts above 83.5 % of the window (integer math: 200,000 → above 167,000). */
export function shouldCompact(estimatedTokens: number, contextWindow: number): boolean {
  if (contextWindow <= 0) return false;
  return estimatedTokens * 1000 > contextWindow * 835;
}

export const SUMMARY_META_KEY = "compactionSummary";

export function isSummaryMessage(message: Message): boolean {
  return message.meta?.[SUMMARY_META_KEY] === true;
}

/** One tool result in the transcript is capped; the summary needs its gist, not its bytes. */
const TRANSCRIPT_RESULT_CHARS = 4_000;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more characters]` : text;
}

export function renderTranscript(messages: readonly Message[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    if (m.role === "tool") {
      lines.push(`[tool ${m.toolName}${m.isError ? " error" : ""}]: ${clip(textOf(m), TRANSCRIPT_RESULT_CHARS)}`);
      continue;
    }
    const text = textOf(m);
    if (text) lines.push(`[${m.role}]: ${text}`);
    if (m.role === "assistant") {
      for (const p of m.content) {
        if (p.type === "toolCall") lines.push(`[assistant called ${p.name}]: ${clip(p.rawArguments, 1_000)}`);
      }
    }
  }
  return lines.join("\n");
}

export interface CompactInput {
  model: LanguageModel;
  /** The working history. */
  messages: readonly Message[];
  /** Index where this turn's new input starts; from there on everything is kept verbatim. */
  turnStart: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

export type CompactOutcome =
  | { ok: true; messages: Message[]; archived: Message[]; summary: string; summaryMessage: UserMessage; turnStart: number }
  | { ok: false; reason: string; error?: unknown };

export async function compactHistory(input: CompactInput): Promise<CompactOutcome> {
  const { messages, turnStart } = input;
  const systems: Message[] = [];
  const history: Message[] = [];
  for (let i = 0; i < Math.min(turnStart, messages.length); i++) {
    const m = messages[i] as Message;
    (m.role === "system" ? systems : history).push(m);
  }
  let lastSummary = -1;
  for (let i = history.length - 1; i >= 0; i--) {
    if (isSummaryMessage(history[i] as Message)) {
      lastSummary = i;
      break;
    }
  }
  const since = history.slice(lastSummary + 1);
  if (since.length === 0) return { ok: false, reason: "nothing to summarise since the last summary" };

  const transcript = renderTranscript(since);
  const previous = lastSummary >= 0 ? summaryFromCarryForward(textOf(history[lastSummary] as Message)) : undefined;
  const prompt = previous ? recompactionPrompt(previous, transcript) : initialSummaryPrompt(transcript);
  let summary: string;
  try {
    const response = await complete(
      input.model,
      {
        messages: [
          { id: messageId(), role: "system", content: [{ type: "text", text: SUMMARY_SYSTEM_PROMPT }] },
          { id: messageId(), role: "user", content: [{ type: "text", text: prompt }] },
        ],
        maxTokens: input.maxTokens,
        metadata: { purpose: "compaction" },
      },
      input.signal,
    );
    summary = textOf(response.message).trim();
  } catch (error) {
    return { ok: false, reason: "summary request failed", error };
  }
  if (!summary) return { ok: false, reason: "summary was empty" };

  const summaryMessage: UserMessage = {
    id: messageId(),
    role: "user",
    content: [{ type: "text", text: carryForwardText(summary) }],
    createdAt: Date.now(),
    meta: { [SUMMARY_META_KEY]: true },
  };
  const kept = messages.slice(turnStart);
  return {
    ok: true,
    messages: [...systems, summaryMessage, ...kept],
    archived: history,
    summary,
    summaryMessage,
    turnStart: systems.length + 1,
  };
}
