/**
 * The PostgreSQL side of records.ts (run inside the store's transactions): a thread for
 * export, a JSONL import into a fresh thread, and a session's rows read or written whole.
 */
import type { PgQueries } from "./pg-queries.js";
import { importedSummarySeq } from "./records.js";
import type { CheckpointRow, ImportResult, ImportThreadInput, SessionRecords, ThreadExport } from "./records.js";
import type { MessageRow } from "./rows.js";
import type { ThreadRow, TurnRow } from "./sqlite-queries.js";
import { SessionStoreError } from "./types.js";

export async function exportThread(q: PgQueries, key: string, threadId: string | undefined): Promise<ThreadExport> {
  const session = await q.requireSession(key);
  const thread = await q.requireThread(threadId ?? session.current_thread_id ?? "");
  if (thread.session_key !== key) throw new SessionStoreError(`thread ${thread.id} belongs to another session`);
  return { session, thread, rows: await q.rowsFrom(thread.id, 0) };
}

export async function importThread(q: PgQueries, input: ImportThreadInput): Promise<ImportResult> {
  const { key, messages, consolidated, metadata } = input;
  const existed = (await q.session(key)) !== undefined;
  const session = await q.ensureSession(key);
  let threadId = session.current_thread_id!;
  if (existed && (await q.messageCount(threadId)) > 0) {
    await q.run("UPDATE threads SET status = 'archived', updated_at = $1 WHERE id = $2 AND name IS NULL", [q.now(), threadId]);
    threadId = (await q.createThread(key, null)).id;
    await q.setCurrentThread(key, threadId);
  }
  const first = await q.append(threadId, messages, null);
  await q.run("UPDATE threads SET replay_seq = $1, summary_seq = $2 WHERE id = $3", [
    consolidated ? first + consolidated : 0,
    importedSummarySeq(messages, consolidated, first),
    threadId,
  ]);
  if (metadata) {
    const current = JSON.parse((await q.requireSession(key)).metadata) as Record<string, unknown>;
    await q.run("UPDATE sessions SET metadata = $1, created_at = $2, updated_at = $3 WHERE key = $4", [
      JSON.stringify({ ...current, ...metadata.values }),
      existed ? session.created_at : metadata.createdAt || q.now(),
      metadata.updatedAt || q.now(),
      key,
    ]);
  }
  return { key, threadId, messageCount: messages.length, archivedPrevious: threadId !== session.current_thread_id };
}

export async function readRecords(q: PgQueries, key: string): Promise<SessionRecords | null> {
  const session = await q.session(key);
  if (!session) return null;
  return {
    session,
    threads: await q.all<ThreadRow>("SELECT * FROM threads WHERE session_key = $1 ORDER BY created_at, id", [key]),
    messages: await q.all<MessageRow>(
      "SELECT m.* FROM messages m JOIN threads t ON t.id = m.thread_id WHERE t.session_key = $1 ORDER BY m.thread_id, m.seq",
      [key],
    ),
    turns: await q.all<TurnRow>("SELECT * FROM turns WHERE session_key = $1 ORDER BY started_at, id", [key]),
    checkpoints: await q.all<CheckpointRow>("SELECT c.* FROM checkpoints c JOIN turns t ON t.id = c.turn_id WHERE t.session_key = $1", [key]),
  };
}

export async function writeRecords(q: PgQueries, records: SessionRecords): Promise<void> {
  const { session } = records;
  await q.run("DELETE FROM sessions WHERE key = $1", [session.key]);
  await q.run("INSERT INTO sessions (key, created_at, updated_at, metadata, current_thread_id) VALUES ($1, $2, $3, $4, $5)", [
    session.key,
    session.created_at,
    session.updated_at,
    session.metadata,
    session.current_thread_id,
  ]);
  for (const t of records.threads) {
    await q.run(
      `INSERT INTO threads (id, session_key, name, status, created_at, updated_at, replay_seq, summary_seq, title)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [t.id, t.session_key, t.name, t.status, t.created_at, t.updated_at, t.replay_seq, t.summary_seq, t.title ?? null],
    );
  }
  await q.insertRows(records.messages);
  for (const t of records.turns) {
    await q.run(
      `INSERT INTO turns (id, session_key, thread_id, status, stop_reason, user_message_id, start_seq, started_at, ended_at, timings, usage, error)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [t.id, t.session_key, t.thread_id, t.status, t.stop_reason, t.user_message_id, t.start_seq, t.started_at, t.ended_at, t.timings, t.usage, t.error],
    );
  }
  for (const c of records.checkpoints) {
    await q.run(
      "INSERT INTO checkpoints (turn_id, phase, iteration, pending_tool_calls, count, updated_at) VALUES ($1, $2, $3, $4, $5, $6)",
      [c.turn_id, c.phase, c.iteration, c.pending_tool_calls, c.count, c.updated_at],
    );
  }
}
