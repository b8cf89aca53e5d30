/**
 * Background compaction of idle sessions: a session untouched for `idleMs` (15 min) has its
 * older turns summarised into `memory/history.jsonl` and its replay point moved so only the
 * last `keep` (8) messages are replayed — the next turn starts small and fast. Busy sessions
 * are never touched.
 */
import { errorMessage } from "../core/errors.js";
import type { Message } from "../core/messages.js";
import { summariseChunk } from "../memory/consolidate.js";
import type { HistoryLog } from "../memory/history-log.js";
import type { Runtime } from "./runtime.js";

export const IDLE_COMPACT_AFTER_MS = 15 * 60 * 1000;
export const IDLE_KEEP_MESSAGES = 8;
/** How much replayed history one idle compaction reads at most. */
const IDLE_READ_BUDGET = 200_000;

export interface IdleCompactionInput {
  runtime: Runtime;
  log: HistoryLog;
  now: number;
  /** Sessions with work in flight (skipped). */
  isBusy: (sessionKey: string) => boolean;
  idleMs?: number;
  keep?: number;
}

/** Compacts every idle session that replays more than `keep` messages; returns their keys. */
export async function compactIdleSessions(input: IdleCompactionInput): Promise<string[]> {
  const idleMs = input.idleMs ?? IDLE_COMPACT_AFTER_MS;
  const keep = input.keep ?? IDLE_KEEP_MESSAGES;
  const store = input.runtime.store();
  const compacted: string[] = [];
  for (const session of await store.listSessions()) {
    if (session.updatedAt > input.now - idleMs || input.isBusy(session.key)) continue;
    const done = session.metadata.idleCompactedAt;
    if (typeof done === "number" && done >= session.updatedAt) continue;
    const history = await store.loadHistory(session.key, { tokenBudget: IDLE_READ_BUDGET });
    const cut = keepCut(history, keep);
    if (cut !== undefined) {
      const first = history[cut];
      try {
        const profile = await input.runtime.resolveAgent();
        const content = await summariseChunk({ model: profile.model, chunk: history.slice(0, cut), sessionKey: session.key, logger: input.runtime.logger });
        input.log.append(session.key, content);
        if (first) await store.markConsolidated(session.key, { fromMessageId: first.id });
        compacted.push(session.key);
      } catch (err) {
        input.runtime.logger.warn("idle compaction failed", { sessionKey: session.key, error: errorMessage(err) });
        continue;
      }
    }
    await store.updateMetadata(session.key, { idleCompactedAt: input.now });
  }
  return compacted;
}

/** Where the kept tail starts: the first user message among the last `keep`, else the last one before them. */
function keepCut(history: readonly Message[], keep: number): number | undefined {
  if (history.length <= keep) return undefined;
  const from = history.length - keep;
  for (let i = from; i < history.length; i++) if (history[i]?.role === "user") return i;
  for (let i = from - 1; i > 0; i--) if (history[i]?.role === "user") return i;
  return undefined;
}
