/**
 * What both stores offer beyond the `SessionStore` seam, for tools that move sessions: JSONL
 * export/import (one thread) and `nanobot store copy` (every row of a session, as stored).
 * Rows have the same shape in SQLite and PostgreSQL, so a copy is lossless both ways.
 */
import type { Message } from "../core/index.js";
import type { MessageRow } from "./rows.js";
import type { SessionRow, ThreadRow, TurnRow } from "./sqlite-queries.js";
import type { SessionStore } from "./types.js";

export interface CheckpointRow {
  turn_id: string;
  phase: string;
  iteration: number;
  pending_tool_calls: string;
  count: number;
  updated_at: number;
}

/** Every row of one session. */
export interface SessionRecords {
  session: SessionRow;
  threads: ThreadRow[];
  messages: MessageRow[];
  turns: TurnRow[];
  checkpoints: CheckpointRow[];
}

/** One thread of a session, for export. */
export interface ThreadExport {
  session: SessionRow;
  thread: ThreadRow;
  /** Oldest first. */
  rows: MessageRow[];
}

export interface ImportThreadInput {
  key: string;
  messages: Message[];
  /** How many leading messages are consolidated (replay starts after them). */
  consolidated: number;
  /** Session metadata to merge and timestamps to take (0 = now). */
  metadata?: { values: Record<string, unknown>; createdAt: number; updatedAt: number };
}

export interface ImportResult {
  key: string;
  threadId: string;
  messageCount: number;
  /** True when the session existed and its previous current thread was archived. */
  archivedPrevious: boolean;
}

export interface PortableSessionStore extends SessionStore {
  /** A thread (the current one by default) with its session, in one snapshot. */
  exportThread(key: string, threadId?: string): Promise<ThreadExport>;
  /** Writes `messages` into a fresh current thread (archiving a non-empty current one). */
  importThread(input: ImportThreadInput): Promise<ImportResult>;
  /** Every row of the session, in one snapshot; null when there is no such session. */
  readRecords(key: string): Promise<SessionRecords | null>;
  /** Replaces the session (if any) with these rows, in one transaction. */
  writeRecords(records: SessionRecords): Promise<void>;
}

/** The summary seq an import sets: the last summary message after the consolidated part. */
export function importedSummarySeq(messages: readonly Message[], consolidated: number, firstSeq: number): number | null {
  let summarySeq: number | null = null;
  messages.forEach((m, i) => {
    if (i >= consolidated && m.meta?.["summary"] === true) summarySeq = firstSeq + i;
  });
  return summarySeq;
}
