/**
 * Context governance: the pipeline that turns the persisted history into a legal request that
 * fits the budget, run on a copy before every LLM call (the history itself is never mutated).
 *
 *   drop malformed → unique call ids → drop orphans → backfill → normalise empty → offload large results →
 *   (over budget) microcompact → (still over) snip → drop orphans → backfill → alternate roles
 */
import type { Message } from "../../core/messages.js";
import type { TokenEstimator } from "../tokens/estimator.js";
import { alternateRoles } from "./alternate-roles.js";
import { microcompact } from "./microcompact.js";
import { offloadLargeResults, type PendingWrite } from "./offload.js";
import { backfillMissingResults, dropMalformed, dropOrphanResults, normalizeEmptyResults } from "./sanitize.js";
import { snipHistory } from "./snip.js";
import { uniqueCallIds } from "./unique-call-ids.js";

export interface GovernOptions {
  estimator: TokenEstimator;
  /** Token budget for the prompt (messages + tools). */
  budget: number;
  maxToolResultChars: number;
  /** Where offloaded results go; without it they are previewed but not saved. */
  outputDir?: string;
  /** Tokens of the tool definitions sent with the request. */
  toolTokens?: number;
  /** Correction learned from provider usage (actual − estimated on the previous call). */
  adjustment?: number;
}

export interface GovernStats {
  dropped: number;
  backfilled: number;
  offloaded: number;
  microcompacted: number;
  snipped: number;
  /** Estimated prompt tokens before and after the budget steps. */
  tokensBefore: number;
  tokensAfter: number;
}

export interface GovernResult {
  messages: Message[];
  /** Offloaded results the caller must write before sending the request. */
  writes: PendingWrite[];
  stats: GovernStats;
}

/** Microcompaction stops once the estimate is back under this share of the budget. */
export const MICROCOMPACT_TARGET = 0.85;

function legalize(messages: readonly Message[]): readonly Message[] {
  return backfillMissingResults(dropOrphanResults(uniqueCallIds(messages)));
}

/** Runs the governance pipeline over a copy of `history`. Pure apart from the estimator cache. */
export function governContext(history: readonly Message[], options: GovernOptions): GovernResult {
  const { estimator, budget } = options;
  const writes: PendingWrite[] = [];
  const inputCount = history.length;

  const normalised = normalizeEmptyResults(legalize(dropMalformed(history)));
  const offload = offloadLargeResults(normalised, options.maxToolResultChars, options.outputDir, writes);
  let messages = offload.messages;

  const fixed = (options.toolTokens ?? 0) + (options.adjustment ?? 0);
  let total = fixed;
  for (let i = 0; i < messages.length; i++) total += estimator.message(messages[i]!);
  const tokensBefore = total;

  let microcompacted = 0;
  let snipped = 0;
  if (total > budget) {
    // The budget steps edit in place, so they get their own arrays.
    const work = [...messages];
    const tokens = work.map((m) => estimator.message(m));
    const compacted = microcompact(work, tokens, total, Math.floor(budget * MICROCOMPACT_TARGET), estimator);
    total = compacted.total;
    microcompacted = compacted.replaced;
    messages = work;
    if (total > budget) {
      const result = snipHistory(work, tokens, budget - fixed - systemTokens(work, tokens));
      snipped = result.snipped;
      if (snipped > 0) {
        messages = legalize(result.messages);
        total = fixed;
        for (let i = 0; i < messages.length; i++) total += estimator.message(messages[i]!);
      }
    }
  }

  // Last, so nothing after it can put two turns of one role side by side again.
  const beforeAlternation = messages.length - countSynthetic(messages, "user");
  messages = alternateRoles(messages);
  const merged = beforeAlternation - (messages.length - countSynthetic(messages, "user"));

  const backfilled = countSynthetic(messages, "tool");
  const inserted = countSynthetic(messages, "user");
  return {
    // Never hand out the caller's own array: the request must not change when history grows.
    messages: messages === history ? history.slice() : (messages as Message[]),
    writes,
    stats: {
      dropped: Math.max(0, inputCount + backfilled + inserted - snipped - merged - messages.length),
      backfilled,
      offloaded: offload.offloaded,
      microcompacted,
      snipped,
      tokensBefore,
      tokensAfter: total,
    },
  };
}

function systemTokens(messages: readonly Message[], tokens: readonly number[]): number {
  let total = 0;
  messages.forEach((m, i) => {
    if (m.role === "system") total += tokens[i] ?? 0;
  });
  return total;
}

function countSynthetic(messages: readonly Message[], role: Message["role"]): number {
  let n = 0;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role === role && m.meta?.synthetic === true) n++;
  }
  return n;
}
