/**
 * The SQLite side of records.ts (synchronous, run inside the store's transactions): a thread
 * for export, a JSONL import into a fresh thread, and a session's rows read or written whole.
 */
import { importedSummarySeq } from "./records.js";
import type { CheckpointRow, ImportResult, ImportThreadInput, SessionRecords, ThreadExport } from "./records.js";
import { completeRow, MESSAGE_COLUMNS, MESSAGE_PARAMS } from "./rows.js";
import type { MessageRow } from "./rows.js";
import type { SessionQueries, ThreadRow, TurnRow } from "./sqlite-queries.js";
import { SessionStoreError } from "./types.js";

export function exportThread(q: SessionQueries, key: string, threadId: string | undefined): ThreadExport {
  const session = q.requireSession(key);
  const thread = q.requireThread(threadId ?? session.current_thread_id ?? "");
  if (thread.session_key !== key) throw new SessionStoreError(`thread ${thread.id} belongs to another session`);
  return { session, thread, rows: q.rowsFrom(thread.id, 0) };
}

export function importThread(q: SessionQueries, input: ImportThreadInput): ImportResult {
  const { key, messages, consolidated, metadata } = input;
  const existed = q.session(key) !== undefined;
  const session = q.ensureSession(key);
  let threadId = session.current_thread_id!;
  if (existed && q.messageCount(threadId) > 0) {
    q.prepare("UPDATE threads SET status = 'archived', updated_at = ? WHERE id = ? AND name IS NULL").run(q.now(), threadId);
    threadId = q.createThread(key, null).id;
    q.setCurrentThread(key, threadId);
  }
  const first = q.append(threadId, messages, null);
  q
    .prepare("UPDATE threads SET replay_seq = ?, summary_seq = ? WHERE id = ?")
    .run(consolidated ? first + consolidated : 0, importedSummarySeq(messages, consolidated, first), threadId);
  if (metadata) {
    const current = JSON.parse(q.requireSession(key).metadata) as Record<string, unknown>;
    q
      .prepare("UPDATE sessions SET metadata = ?, created_at = ?, updated_at = ? WHERE key = ?")
      .run(
        JSON.stringify({ ...current, ...metadata.values }),
        existed ? session.created_at : metadata.createdAt || q.now(),
        metadata.updatedAt || q.now(),
        key,
      );
  }
  return { key, threadId, messageCount: messages.length, archivedPrevious: threadId !== session.current_thread_id };
}

export function readRecords(q: SessionQueries, key: string): SessionRecords | null {
  const session = q.session(key);
  if (!session) return null;
  return {
    session,
    threads: q.prepare<[string], ThreadRow>("SELECT * FROM threads WHERE session_key = ? ORDER BY created_at, id").all(key),
    messages: q
      .prepare<[string], MessageRow>("SELECT m.* FROM messages m JOIN threads t ON t.id = m.thread_id WHERE t.session_key = ? ORDER BY m.thread_id, m.seq")
      .all(key),
    turns: q.prepare<[string], TurnRow>("SELECT * FROM turns WHERE session_key = ? ORDER BY started_at, id").all(key),
    checkpoints: q
      .prepare<[string], CheckpointRow>("SELECT c.* FROM checkpoints c JOIN turns t ON t.id = c.turn_id WHERE t.session_key = ?")
      .all(key),
  };
}

export function writeRecords(q: SessionQueries, records: SessionRecords): void {
  const { session } = records;
  q.prepare("DELETE FROM sessions WHERE key = ?").run(session.key);
  q
    .prepare("INSERT INTO sessions (key, created_at, updated_at, metadata, current_thread_id) VALUES (?, ?, ?, ?, ?)")
    .run(session.key, session.created_at, session.updated_at, session.metadata, session.current_thread_id);
  const thread = q.prepare(
    `INSERT INTO threads (id, session_key, name, status, created_at, updated_at, replay_seq, summary_seq, title)
     VALUES (@id, @session_key, @name, @status, @created_at, @updated_at, @replay_seq, @summary_seq, @title)`,
  );
  for (const row of records.threads) thread.run({ ...row, title: row.title ?? null });
  const message = q.prepare(`INSERT INTO messages (${MESSAGE_COLUMNS}) VALUES (${MESSAGE_PARAMS})`);
  for (const row of records.messages) message.run(completeRow(row));
  const turn = q.prepare(
    `INSERT INTO turns (id, session_key, thread_id, status, stop_reason, user_message_id, start_seq, started_at, ended_at, timings, usage, error)
     VALUES (@id, @session_key, @thread_id, @status, @stop_reason, @user_message_id, @start_seq, @started_at, @ended_at, @timings, @usage, @error)`,
  );
  for (const row of records.turns) turn.run(row);
  const checkpoint = q.prepare(
    `INSERT INTO checkpoints (turn_id, phase, iteration, pending_tool_calls, count, updated_at)
     VALUES (@turn_id, @phase, @iteration, @pending_tool_calls, @count, @updated_at)`,
  );
  for (const row of records.checkpoints) checkpoint.run(row);
}
