/**
 * Memory consolidation: when the replayed history of a session reaches its token budget, the
 * oldest turns (cut at a user-message boundary) are summarised by the LLM into
 * `memory/history.jsonl`, and the session's replay point moves past them. The messages stay
 * readable in the store; only what the model re-reads each turn shrinks.
 */
import { systemMessage, textOf, toolCallsOf, userMessage } from "../core/message-helpers.js";
import type { LanguageModel } from "../core/llm.js";
import { tracedModelCall } from "../engine/loop/model-span.js";
import type { Message } from "../core/messages.js";
import { errorMessage } from "../core/errors.js";
import type { Logger } from "../core/logger.js";
import type { SessionStore } from "../session/types.js";
import type { HistoryEntry, HistoryLog } from "./history-log.js";

export const MAX_CONSOLIDATION_ROUNDS = 5;
/** Characters of a chunk's transcript kept when the LLM cannot summarise it. */
const RAW_FALLBACK_CHARS = 4_000;
const TOOL_RESULT_CHARS = 400;

const CONSOLIDATION_PROMPT = [
  "You maintain the long-term history of a conversation between a user and an assistant.",
  "Summarise the transcript below into a compact paragraph for future reference: facts learned,",
  "decisions, requests, results, open items, names, dates and numbers. Write in the third person,",
  "past tense, no preamble. Never invent anything that is not in the transcript.",
].join(" ");

export interface ConsolidateInput {
  store: SessionStore;
  sessionKey: string;
  /** The replayed history as loaded for this turn (oldest first). */
  history: readonly Message[];
  model: LanguageModel;
  estimate: (message: Message) => number;
  /** Tokens the replayed history may take. */
  budget: number;
  /** After consolidating, the history should take at most `budget × ratio` tokens (0.5). */
  ratio: number;
  log: HistoryLog;
  maxRounds?: number;
  signal?: AbortSignal;
  logger?: Logger;
}

export interface ConsolidateOutcome {
  history: Message[];
  rounds: number;
  /** Messages moved out of the replayed history. */
  consolidated: number;
  entries: HistoryEntry[];
}

/** Consolidates when the history is at or over its token budget; otherwise returns it unchanged. */
export async function consolidateIfNeeded(input: ConsolidateInput): Promise<ConsolidateOutcome> {
  let history = [...input.history];
  const sizes = history.map((m) => input.estimate(m));
  let total = sizes.reduce((a, b) => a + b, 0);
  const outcome: ConsolidateOutcome = { history, rounds: 0, consolidated: 0, entries: [] };
  if (total < input.budget) return outcome;
  const target = Math.floor(input.budget * input.ratio);
  const maxRounds = input.maxRounds ?? MAX_CONSOLIDATION_ROUNDS;
  // Each round summarises at most half the budget, so one summary request stays small.
  const chunkCap = Math.max(1, Math.floor(input.budget / 2));
  while (total > target && outcome.rounds < maxRounds) {
    const cut = findCut(history, sizes, chunkCap, total - target);
    if (cut === undefined) break;
    const chunk = history.slice(0, cut);
    const first = history[cut];
    if (!first) break;
    const content = await summariseChunk({ ...input, chunk });
    outcome.entries.push(input.log.append(input.sessionKey, content));
    await input.store.markConsolidated(input.sessionKey, { fromMessageId: first.id });
    const removed = sizes.splice(0, cut).reduce((a, b) => a + b, 0);
    history = history.slice(cut);
    total -= removed;
    outcome.rounds++;
    outcome.consolidated += cut;
    input.logger?.debug("consolidated history", { sessionKey: input.sessionKey, messages: cut, tokens: removed, cursor: outcome.entries.at(-1)?.cursor });
  }
  outcome.history = history;
  return outcome;
}

/**
 * The index of the user message the kept history starts at: past at least `neededTokens`
 * tokens, or `cap` tokens (one round's chunk), whichever comes first; never 0. Undefined when
 * no such boundary exists.
 */
function findCut(history: readonly Message[], sizes: readonly number[], cap: number, neededTokens: number): number | undefined {
  const wantTokens = Math.min(cap, neededTokens);
  let removed = 0;
  let candidate: number | undefined;
  for (let i = 1; i < history.length; i++) {
    removed += sizes[i - 1] ?? 0;
    if (history[i]?.role !== "user") continue;
    candidate = i;
    if (removed >= wantTokens) break;
  }
  return candidate;
}

export interface SummariseInput {
  model: LanguageModel;
  chunk: readonly Message[];
  sessionKey: string;
  signal?: AbortSignal;
  logger?: Logger;
}

/** The LLM's summary of `chunk`, or its raw transcript (prefixed `[raw]`) when the LLM fails. */
export async function summariseChunk(input: SummariseInput): Promise<string> {
  const transcript = toTranscript(input.chunk);
  try {
    const request = { messages: [systemMessage(CONSOLIDATION_PROMPT), userMessage(transcript)], maxTokens: 1_024, temperature: 0 };
    const response = await tracedModelCall(input.model, request, () => input.model.stream(request, input.signal).result(), "consolidation");
    const text = textOf(response.message).trim();
    if (text) return text;
    input.logger?.warn("consolidation summary was empty; keeping the raw transcript", { sessionKey: input.sessionKey });
  } catch (err) {
    input.logger?.warn("consolidation summary failed; keeping the raw transcript", { sessionKey: input.sessionKey, error: errorMessage(err) });
  }
  return `[raw] ${transcript.slice(0, RAW_FALLBACK_CHARS)}`;
}

/** A plain-text rendering of messages for a summariser. */
export function toTranscript(messages: readonly Message[]): string {
  const lines: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === "system") continue;
    if (m.role === "tool") {
      const text = textOf(m);
      lines.push(`[tool ${m.toolName}] ${text.length > TOOL_RESULT_CHARS ? `${text.slice(0, TOOL_RESULT_CHARS)}…` : text}`);
      continue;
    }
    const text = textOf(m).trim();
    if (text) lines.push(`[${m.role}] ${text}`);
    if (m.role === "assistant") {
      const calls = toolCallsOf(m);
      for (let c = 0; c < calls.length; c++) lines.push(`[assistant → ${calls[c]!.name}] ${JSON.stringify(calls[c]!.arguments).slice(0, TOOL_RESULT_CHARS)}`);
    }
  }
  return lines.join("\n");
}
