/**
 * Thread operations over SQLite (synchronous, run inside the store's write transactions).
 * A session always has exactly one current thread; archived threads keep their messages.
 */
import type { SessionQueries, ThreadRow } from "./sqlite-queries.js";
import { SessionStoreError } from "./types.js";
import type { ThreadInfo } from "./types.js";

export function listThreads(q: SessionQueries, sessionKey: string): ThreadInfo[] {
  const session = q.session(sessionKey);
  if (!session) return [];
  const rows = q
    .prepare<[string], ThreadRow>("SELECT * FROM threads WHERE session_key = ? ORDER BY created_at, id")
    .all(sessionKey);
  return rows.map((row) => q.threadInfo(row, session.current_thread_id));
}

export function newThread(q: SessionQueries, sessionKey: string): ThreadInfo {
  const current = q.currentThread(sessionKey);
  // Named threads are workspaces the user returns to by name; only the unnamed one is archived.
  if (current.name === null) setStatus(q, current.id, "archived");
  const thread = q.createThread(sessionKey, null);
  q.setCurrentThread(sessionKey, thread.id);
  return q.threadInfo(thread, thread.id);
}

export function openThread(q: SessionQueries, sessionKey: string, name: string): ThreadInfo {
  const clean = validThreadName(name);
  q.ensureSession(sessionKey);
  let thread = q
    .prepare<[string, string], ThreadRow>("SELECT * FROM threads WHERE session_key = ? AND name = ?")
    .get(sessionKey, clean);
  if (!thread) thread = q.createThread(sessionKey, clean);
  else if (thread.status === "archived") setStatus(q, thread.id, "active");
  q.setCurrentThread(sessionKey, thread.id);
  return q.threadInfo(q.requireThread(thread.id), thread.id);
}

export function switchThread(q: SessionQueries, sessionKey: string, threadId: string): ThreadInfo {
  const thread = q.requireThread(threadId);
  if (thread.session_key !== sessionKey) throw new SessionStoreError(`thread ${threadId} belongs to another session`);
  if (thread.status === "archived") setStatus(q, thread.id, "active");
  q.setCurrentThread(sessionKey, thread.id);
  return q.threadInfo(q.requireThread(thread.id), thread.id);
}

export function renameThread(q: SessionQueries, threadId: string, name: string | null): ThreadInfo {
  const thread = q.requireThread(threadId);
  const clean = name === null ? null : validThreadName(name);
  if (clean !== null) {
    const taken = q
      .prepare<[string, string, string], { id: string }>(
        "SELECT id FROM threads WHERE session_key = ? AND name = ? AND id <> ?",
      )
      .get(thread.session_key, clean, threadId);
    if (taken) throw new SessionStoreError(`a thread named ${JSON.stringify(clean)} already exists in ${thread.session_key}`);
  }
  q.prepare("UPDATE threads SET name = ?, updated_at = ? WHERE id = ?").run(clean, q.now(), threadId);
  const session = q.requireSession(thread.session_key);
  return q.threadInfo(q.requireThread(threadId), session.current_thread_id);
}

export function deleteThread(q: SessionQueries, threadId: string): boolean {
  const thread = q.thread(threadId);
  if (!thread) return false;
  const session = q.requireSession(thread.session_key);
  // Messages, turns and checkpoints follow by ON DELETE CASCADE.
  q.prepare("DELETE FROM threads WHERE id = ?").run(threadId);
  if (session.current_thread_id === threadId) {
    const fresh = q.createThread(thread.session_key, null);
    q.setCurrentThread(thread.session_key, fresh.id);
  }
  return true;
}

function setStatus(q: SessionQueries, threadId: string, status: ThreadRow["status"]): void {
  q.prepare("UPDATE threads SET status = ?, updated_at = ? WHERE id = ?").run(status, q.now(), threadId);
}

export function validThreadName(name: string): string {
  const clean = name.trim();
  if (!clean || clean.length > 100 || /[\n\r\t]/.test(clean)) {
    throw new SessionStoreError(`invalid thread name ${JSON.stringify(name)} (1-100 characters, one line)`);
  }
  return clean;
}
