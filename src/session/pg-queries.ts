/**
 * The PostgreSQL store's building blocks over one connection, meant to run inside its
 * transactions: the same steps as the SQLite `SessionQueries`, awaited. Rows come back in the
 * SQLite store's shapes, so both share the row translation (rows.ts) and the repair rules.
 */
import { newId } from "../core/index.js";
import type { Message, ToolCallPart } from "../core/index.js";
import type { Queryable } from "./pg-db.js";
import { unansweredToolCalls } from "./repair.js";
import { MESSAGE_COLUMNS, messageToRow, rowToMessage } from "./rows.js";
import type { MessageRow } from "./rows.js";
import type { RowPlace } from "./parsed-messages.js";
import type { MessageTokenCounter } from "../core/token-counts.js";
import type { SessionRow, ThreadRow, TurnRow } from "./sqlite-queries.js";
import { SessionStoreError } from "./types.js";
import type { SessionInfo, ThreadInfo } from "./types.js";

const COLUMN_NAMES = MESSAGE_COLUMNS.split(", ");

export class PgQueries {
  constructor(
    readonly c: Queryable,
    readonly now: () => number,
    /** Exact token counts saved with appended messages (rows.ts); none when absent. */
    private readonly countTokens?: MessageTokenCounter,
  ) {}

  async all<R>(sql: string, params: unknown[] = []): Promise<R[]> {
    return (await this.c.query(sql, params)).rows as R[];
  }

  async one<R>(sql: string, params: unknown[] = []): Promise<R | undefined> {
    return (await this.all<R>(sql, params))[0];
  }

  async run(sql: string, params: unknown[] = []): Promise<number> {
    return (await this.c.query(sql, params)).rowCount ?? 0;
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────────

  session(key: string): Promise<SessionRow | undefined> {
    return this.one<SessionRow>("SELECT * FROM sessions WHERE key = $1", [key]);
  }

  /** Creates the session and its first thread when missing; returns the row. */
  async ensureSession(key: string, metadata: Record<string, unknown> = {}): Promise<SessionRow> {
    const existing = await this.session(key);
    if (existing?.current_thread_id) return existing;
    const now = this.now();
    if (!existing) {
      await this.run("INSERT INTO sessions (key, created_at, updated_at, metadata) VALUES ($1, $2, $3, $4)", [key, now, now, JSON.stringify(metadata)]);
    }
    const thread = await this.createThread(key, null);
    await this.setCurrentThread(key, thread.id);
    return (await this.session(key))!;
  }

  async requireSession(key: string): Promise<SessionRow> {
    const row = await this.session(key);
    if (!row) throw new SessionStoreError(`no session ${JSON.stringify(key)}`);
    return row;
  }

  async touchSession(key: string): Promise<void> {
    await this.run("UPDATE sessions SET updated_at = $1 WHERE key = $2", [this.now(), key]);
  }

  async sessionInfo(row: SessionRow): Promise<SessionInfo> {
    const threadId = row.current_thread_id ?? "";
    return {
      key: row.key,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      metadata: JSON.parse(row.metadata) as Record<string, unknown>,
      currentThreadId: threadId,
      messageCount: threadId ? await this.messageCount(threadId) : 0,
    };
  }

  // ── threads ─────────────────────────────────────────────────────────────────────────────

  thread(id: string): Promise<ThreadRow | undefined> {
    return this.one<ThreadRow>("SELECT * FROM threads WHERE id = $1", [id]);
  }

  async requireThread(id: string): Promise<ThreadRow> {
    const row = await this.thread(id);
    if (!row) throw new SessionStoreError(`no thread ${JSON.stringify(id)}`);
    return row;
  }

  async createThread(sessionKey: string, name: string | null): Promise<ThreadRow> {
    const now = this.now();
    const row = await this.one<ThreadRow>(
      "INSERT INTO threads (id, session_key, name, status, created_at, updated_at) VALUES ($1, $2, $3, 'active', $4, $5) RETURNING *",
      [newId("thr"), sessionKey, name, now, now],
    );
    return row!;
  }

  /** The session's current thread, creating session and thread if needed. */
  async currentThread(sessionKey: string): Promise<ThreadRow> {
    const current = await this.currentThreadIfAny(sessionKey);
    if (current) return current;
    const session = await this.ensureSession(sessionKey);
    return this.requireThread(session.current_thread_id!);
  }

  /** The session's current thread in one round trip; undefined when there is no session (or no thread yet). */
  currentThreadIfAny(sessionKey: string): Promise<ThreadRow | undefined> {
    return this.one<ThreadRow>("SELECT t.* FROM sessions s JOIN threads t ON t.id = s.current_thread_id WHERE s.key = $1", [sessionKey]);
  }

  async setCurrentThread(sessionKey: string, threadId: string): Promise<void> {
    await this.run("UPDATE sessions SET current_thread_id = $1, updated_at = $2 WHERE key = $3", [threadId, this.now(), sessionKey]);
  }

  async threadInfo(row: ThreadRow, currentId: string | null): Promise<ThreadInfo> {
    return {
      id: row.id,
      sessionKey: row.session_key,
      name: row.name,
      title: row.title ?? null,
      status: row.status,
      current: row.id === currentId,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      messageCount: await this.messageCount(row.id),
    };
  }

  // ── messages ────────────────────────────────────────────────────────────────────────────

  async messageCount(threadId: string): Promise<number> {
    return (await this.one<{ n: number }>("SELECT COUNT(*)::int AS n FROM messages WHERE thread_id = $1", [threadId]))!.n;
  }

  async nextSeq(threadId: string): Promise<number> {
    return ((await this.one<{ s: number | null }>("SELECT MAX(seq) AS s FROM messages WHERE thread_id = $1", [threadId]))!.s ?? 0) + 1;
  }

  /** Appends messages at the end of the thread in one statement; returns the seq of the first one. */
  async append(threadId: string, messages: readonly Message[], turnId: string | null): Promise<number> {
    const first = await this.nextSeq(threadId);
    if (!messages.length) return first;
    await this.insertRows(messages.map((m, i) => messageToRow(m, threadId, first + i, turnId, this.countTokens)));
    // A turn's messages mark the thread active once, when the turn closes (pg-turns.ts `closeTurn`).
    if (turnId === null) await this.touchThread(threadId);
    return first;
  }

  async touchThread(threadId: string): Promise<void> {
    await this.run("UPDATE threads SET updated_at = $1 WHERE id = $2", [this.now(), threadId]);
  }

  /** Inserts message rows as they are (in batches: a statement takes at most 65535 parameters). */
  async insertRows(rows: readonly MessageRow[]): Promise<void> {
    for (let start = 0; start < rows.length; start += 500) {
      const batch = rows.slice(start, start + 500);
      const params: unknown[] = [];
      const tuples = batch.map((row) => {
        const cells = COLUMN_NAMES.map((name) => {
          // Rows copied from an older export lack the newer columns.
          params.push(row[name as keyof MessageRow] ?? null);
          return `$${params.length}`;
        });
        return `(${cells.join(", ")})`;
      });
      await this.run(`INSERT INTO messages (${MESSAGE_COLUMNS}) VALUES ${tuples.join(", ")}`, params);
    }
  }

  rowsFrom(threadId: string, fromSeq: number): Promise<MessageRow[]> {
    return this.all<MessageRow>("SELECT * FROM messages WHERE thread_id = $1 AND seq >= $2 ORDER BY seq", [threadId, fromSeq]);
  }

  /** Up to `limit` whole rows below `beforeSeq` (and at or after `fromSeq`), newest first. */
  rowsNewestFirst(threadId: string, fromSeq: number, beforeSeq: number, limit: number): Promise<MessageRow[]> {
    return this.all<MessageRow>(
      "SELECT * FROM messages WHERE thread_id = $1 AND seq >= $2 AND seq < $3::bigint ORDER BY seq DESC LIMIT $4",
      [threadId, fromSeq, beforeSeq, limit],
    );
  }

  /** Up to `limit` rows' `[id, seq]` below `beforeSeq` (and at or after `fromSeq`), newest first. */
  async placesNewestFirst(threadId: string, fromSeq: number, beforeSeq: number, limit: number): Promise<RowPlace[]> {
    const result = await this.c.query<[string, number]>({
      text: "SELECT id, seq FROM messages WHERE thread_id = $1 AND seq >= $2 AND seq < $3::bigint ORDER BY seq DESC LIMIT $4",
      values: [threadId, fromSeq, beforeSeq, limit],
      // Arrays, not an object per row: this runs on every turn.
      rowMode: "array",
    });
    return result.rows;
  }

  /** The whole rows at `seqs` of a thread, by seq. */
  async rowsAtSeqs(threadId: string, seqs: readonly number[]): Promise<Map<number, MessageRow>> {
    const rows = await this.all<MessageRow>("SELECT * FROM messages WHERE thread_id = $1 AND seq = ANY($2::int[])", [threadId, seqs]);
    return new Map(rows.map((row) => [row.seq, row]));
  }

  rowAt(threadId: string, seq: number): Promise<MessageRow | undefined> {
    return this.one<MessageRow>("SELECT * FROM messages WHERE thread_id = $1 AND seq = $2", [threadId, seq]);
  }

  messageRow(id: string): Promise<MessageRow | undefined> {
    return this.one<MessageRow>("SELECT * FROM messages WHERE id = $1", [id]);
  }

  /** Unanswered calls of the thread's last assistant block (reads only the tail). */
  async openCallsAtTail(threadId: string): Promise<ToolCallPart[]> {
    const tail: Message[] = [];
    for (let before = Number.MAX_SAFE_INTEGER; ; ) {
      const rows = await this.rowsNewestFirst(threadId, 0, before, 16);
      for (const row of rows) {
        tail.unshift(rowToMessage(row));
        if (row.role !== "tool") return unansweredToolCalls(tail);
      }
      if (rows.length < 16) return unansweredToolCalls(tail);
      before = rows[rows.length - 1]!.seq;
    }
  }

  // ── turns ───────────────────────────────────────────────────────────────────────────────

  turn(id: string): Promise<TurnRow | undefined> {
    return this.one<TurnRow>("SELECT * FROM turns WHERE id = $1", [id]);
  }

  async requireTurn(id: string): Promise<TurnRow> {
    const row = await this.turn(id);
    if (!row) throw new SessionStoreError(`no turn ${JSON.stringify(id)}`);
    return row;
  }

  /** Rows a turn added after its user message, oldest first. */
  rowsFromTurn(turnId: string, startSeq: number): Promise<MessageRow[]> {
    return this.all<MessageRow>("SELECT * FROM messages WHERE turn_id = $1 AND seq > $2 ORDER BY seq", [turnId, startSeq]);
  }

  async turnRowIds(turnId: string, startSeq: number): Promise<string[]> {
    const rows = await this.all<{ id: string }>("SELECT id FROM messages WHERE turn_id = $1 AND seq > $2 ORDER BY seq", [turnId, startSeq]);
    return rows.map((r) => r.id);
  }
}
