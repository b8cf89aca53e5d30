/**
 * The oversized-input rule: one user message may take at most a share (half) of the prompt
 * budget. Past that it would crowd out the system prompt and the history, or overflow the
 * window outright (a provider 400 that no retry or compaction can fix, since the message is
 * this turn's own input). The message keeps its beginning and its end, where instructions and
 * questions usually are, and the middle gives way to a marker saying how much was removed and
 * where the full text is. Pure: the caller saves the full text and tells the user.
 */
import type { UserContentPart } from "../../core/messages.js";
import type { TokenEstimator } from "../tokens/estimator.js";
import { ENGINE_DEFAULTS } from "../types.js";

/** Share of the prompt budget one user message may take. */
export const INPUT_SHARE_OF_BUDGET = 0.5;
/** Worst case tokens per character (a 4-byte UTF-8 character, byte-level BPE): below this no count is needed. */
const MAX_TOKENS_PER_CHAR = 4;
/** Room left under the limit for the marker and estimate drift. */
const SAFETY = 0.95;
const MAX_ATTEMPTS = 6;

export interface InputLimitOptions {
  estimator: TokenEstimator;
  contextWindow: number;
  maxTokens: number;
  /** Where the caller keeps the full text; named in the marker. */
  savedAt?: string;
  /** Override the share of the budget (tests, other policies). */
  share?: number;
}

export interface InputTruncation {
  originalChars: number;
  removedChars: number;
  /** Estimated tokens of the message as sent and the limit it had to fit. */
  originalTokens: number;
  limitTokens: number;
}

export interface LimitedInput {
  content: string | UserContentPart[];
  /** Set when the message was cut. */
  truncation?: InputTruncation;
}

/** Tokens one user message may take: `share × (window − maxTokens − reserve)`; Infinity for an unknown window. */
export function inputTokenLimit(contextWindow: number, maxTokens: number, share = INPUT_SHARE_OF_BUDGET): number {
  if (!(contextWindow > 0)) return Infinity;
  const budget = contextWindow - maxTokens - ENGINE_DEFAULTS.budgetReserve;
  return Math.max(256, Math.floor(Math.max(0, budget) * share));
}

/**
 * False when the message certainly fits, judged by its length alone (no token count): the
 * check every turn can afford. True means `limitUserInput` has to count.
 */
export function mayExceedInputLimit(content: string | UserContentPart[], contextWindow: number, maxTokens: number, share?: number): boolean {
  const limit = inputTokenLimit(contextWindow, maxTokens, share);
  return limit !== Infinity && textLength(content) * MAX_TOKENS_PER_CHAR > limit;
}

/** The content unchanged when it fits, else its text cut to head + marker + tail so it does. */
export function limitUserInput(content: string | UserContentPart[], options: InputLimitOptions): LimitedInput {
  if (!mayExceedInputLimit(content, options.contextWindow, options.maxTokens, options.share)) return { content };
  const limit = inputTokenLimit(options.contextWindow, options.maxTokens, options.share);
  const texts = typeof content === "string" ? [content] : content.flatMap((p) => (p.type === "text" ? [p.text] : []));
  const chars = texts.reduce((n, t) => n + t.length, 0);
  const tokens = texts.reduce((n, t) => n + options.estimator.text(t), 0);
  if (tokens <= limit) return { content };

  // Characters to keep, from the message's own chars-per-token, shrunk until the estimate fits.
  let keep = Math.floor((chars * limit * SAFETY) / tokens);
  let cut: Cut[] = [];
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    cut = shareOut(texts, keep).map((allowed, i) => cutMiddle(texts[i]!, allowed, options.savedAt));
    const after = cut.reduce((n, c) => n + options.estimator.text(c.text), 0);
    if (after <= limit) break;
    keep = Math.floor(keep * Math.min(0.9, (limit * SAFETY) / after));
  }
  const removed = cut.reduce((n, c) => n + c.removed, 0);
  const truncation: InputTruncation = { originalChars: chars, removedChars: removed, originalTokens: tokens, limitTokens: limit };
  if (typeof content === "string") return { content: cut[0]!.text, truncation };
  let next = 0;
  const parts = content.map((p) => (p.type === "text" ? { ...p, text: cut[next++]!.text } : p));
  return { content: parts, truncation };
}

/** The user-facing sentence for a truncation. */
export function truncationNotice(t: InputTruncation): string {
  return (
    `Your message was too long for the model (about ${fmt(t.originalTokens)} tokens; one message may use ${fmt(t.limitTokens)}), ` +
    `so ${fmt(t.removedChars)} of its ${fmt(t.originalChars)} characters were left out from the middle; the beginning and the end were kept.`
  );
}

function textLength(content: string | UserContentPart[]): number {
  if (typeof content === "string") return content.length;
  let n = 0;
  for (const p of content) if (p.type === "text") n += p.text.length;
  return n;
}

/** Each text's allowance, in proportion to its length (short texts keep all of theirs). */
function shareOut(texts: readonly string[], keep: number): number[] {
  const total = texts.reduce((n, t) => n + t.length, 0);
  return texts.map((t) => (t.length === 0 ? 0 : Math.floor((keep * t.length) / total)));
}

interface Cut {
  text: string;
  removed: number;
}

/** `text` whole when it fits `allowed`, else its head and tail around a marker. */
function cutMiddle(text: string, allowed: number, savedAt: string | undefined): Cut {
  if (text.length <= allowed) return { text, removed: 0 };
  const headEnd = safeIndex(text, Math.floor(allowed / 2));
  const tailStart = Math.max(headEnd, safeIndex(text, text.length - (allowed - headEnd)));
  const removed = tailStart - headEnd;
  const where = savedAt ? ` The full message is saved at ${savedAt}.` : "";
  const marker = `\n\n[… ${fmt(removed)} characters removed here: the message was too long for the context window.${where} …]\n\n`;
  return { text: `${text.slice(0, headEnd)}${marker}${text.slice(tailStart)}`, removed };
}

/** Never split a surrogate pair. */
function safeIndex(text: string, index: number): number {
  const at = Math.max(0, Math.min(text.length, index));
  const code = text.charCodeAt(at);
  return code >= 0xdc00 && code <= 0xdfff ? at + 1 : at;
}

function fmt(n: number): string {
  return n.toLocaleString("en-US");
}
