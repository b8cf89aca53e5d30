/**
 * `nanobot store copy`: every session of one store into another (SQLite ⇄ PostgreSQL), row for
 * row: threads with their names, titles and replay points, messages with their ids and order,
 * turns and open checkpoints. A session already in the target is replaced as a whole, each in
 * its own transaction, so running the copy again after an interruption finishes the job.
 */
import type { PortableSessionStore } from "./records.js";

export interface CopyResult {
  sessions: number;
  threads: number;
  messages: number;
  turns: number;
}

export async function copyStore(
  from: PortableSessionStore,
  to: PortableSessionStore,
  options: { onSession?: (key: string) => void } = {},
): Promise<CopyResult> {
  const result: CopyResult = { sessions: 0, threads: 0, messages: 0, turns: 0 };
  for (const session of await from.listSessions()) {
    const records = await from.readRecords(session.key);
    if (!records) continue; // deleted while we were copying
    await to.writeRecords(records);
    result.sessions++;
    result.threads += records.threads.length;
    result.messages += records.messages.length;
    result.turns += records.turns.length;
    options.onSession?.(session.key);
  }
  return result;
}
