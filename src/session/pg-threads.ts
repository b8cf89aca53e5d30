/**
 * Thread operations over PostgreSQL: the rules of sqlite-threads.ts, awaited, run inside the
 * store's write transactions. A session always has exactly one current thread.
 */
import type { PgQueries } from "./pg-queries.js";
import type { ThreadRow } from "./sqlite-queries.js";
import { validThreadName } from "./sqlite-threads.js";
import { SessionStoreError } from "./types.js";
import type { ThreadInfo } from "./types.js";

export async function listThreads(q: PgQueries, sessionKey: string): Promise<ThreadInfo[]> {
  const session = await q.session(sessionKey);
  if (!session) return [];
  const rows = await q.all<ThreadRow>("SELECT * FROM threads WHERE session_key = $1 ORDER BY created_at, id", [sessionKey]);
  return Promise.all(rows.map((row) => q.threadInfo(row, session.current_thread_id)));
}

export async function newThread(q: PgQueries, sessionKey: string): Promise<ThreadInfo> {
  const current = await q.currentThread(sessionKey);
  if (current.name === null) await setStatus(q, current.id, "archived");
  const thread = await q.createThread(sessionKey, null);
  await q.setCurrentThread(sessionKey, thread.id);
  return q.threadInfo(thread, thread.id);
}

export async function openThread(q: PgQueries, sessionKey: string, name: string): Promise<ThreadInfo> {
  const clean = validThreadName(name);
  await q.ensureSession(sessionKey);
  let thread = await q.one<ThreadRow>("SELECT * FROM threads WHERE session_key = $1 AND name = $2", [sessionKey, clean]);
  if (!thread) thread = await q.createThread(sessionKey, clean);
  else if (thread.status === "archived") await setStatus(q, thread.id, "active");
  await q.setCurrentThread(sessionKey, thread.id);
  return q.threadInfo(await q.requireThread(thread.id), thread.id);
}

export async function switchThread(q: PgQueries, sessionKey: string, threadId: string): Promise<ThreadInfo> {
  const thread = await q.requireThread(threadId);
  if (thread.session_key !== sessionKey) throw new SessionStoreError(`thread ${threadId} belongs to another session`);
  if (thread.status === "archived") await setStatus(q, thread.id, "active");
  await q.setCurrentThread(sessionKey, thread.id);
  return q.threadInfo(await q.requireThread(thread.id), thread.id);
}

export async function renameThread(q: PgQueries, threadId: string, name: string | null): Promise<ThreadInfo> {
  const thread = await q.requireThread(threadId);
  const clean = name === null ? null : validThreadName(name);
  if (clean !== null) {
    const taken = await q.one<{ id: string }>("SELECT id FROM threads WHERE session_key = $1 AND name = $2 AND id <> $3", [thread.session_key, clean, threadId]);
    if (taken) throw new SessionStoreError(`a thread named ${JSON.stringify(clean)} already exists in ${thread.session_key}`);
  }
  await q.run("UPDATE threads SET name = $1, updated_at = $2 WHERE id = $3", [clean, q.now(), threadId]);
  const session = await q.requireSession(thread.session_key);
  return q.threadInfo(await q.requireThread(threadId), session.current_thread_id);
}

export async function deleteThread(q: PgQueries, threadId: string): Promise<boolean> {
  const thread = await q.thread(threadId);
  if (!thread) return false;
  const session = await q.requireSession(thread.session_key);
  await q.run("DELETE FROM threads WHERE id = $1", [threadId]);
  if (session.current_thread_id === threadId) {
    const fresh = await q.createThread(thread.session_key, null);
    await q.setCurrentThread(thread.session_key, fresh.id);
  }
  return true;
}

async function setStatus(q: PgQueries, threadId: string, status: ThreadRow["status"]): Promise<void> {
  await q.run("UPDATE threads SET status = $1, updated_at = $2 WHERE id = $3", [status, q.now(), threadId]);
}
