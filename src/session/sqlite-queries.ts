/**
 * Synchronous building blocks over the schema, meant to run inside the store's transactions.
 * Every statement touching messages goes through the index on (thread_id, seq) or the id, so
 * the cost of a turn does not grow with the length of the session. A turn's rows are found by
 * its thread and first seq (all of a turn's messages are in the thread it began in), not by an
 * index on turn_id: each index is one more page written by every commit that adds a message.
 */
import type Database from "better-sqlite3";
import { newId } from "../core/index.js";
import type { Message } from "../core/index.js";
import { MESSAGE_COLUMNS, MESSAGE_PARAMS, messageToRow, rowFromRaw, rowToMessage } from "./rows.js";
import type { RawMessageRow } from "./rows.js";
import type { MessageTokenCounter } from "../core/token-counts.js";
import type { MessageRow } from "./rows.js";
import type { RowPlace } from "./parsed-messages.js";
import { unansweredToolCalls } from "./repair.js";
import type { ToolCallPart } from "../core/index.js";
import { SessionStoreError } from "./types.js";
import type { SessionInfo, ThreadInfo, TurnInfo } from "./types.js";

export interface SessionRow {
  key: string;
  created_at: number;
  updated_at: number;
  metadata: string;
  current_thread_id: string | null;
}

export interface ThreadRow {
  id: string;
  session_key: string;
  name: string | null;
  status: "active" | "archived";
  created_at: number;
  updated_at: number;
  replay_seq: number;
  summary_seq: number | null;
  /** Schema v3; set from the thread's first user message. */
  title: string | null;
}

export interface TurnRow {
  id: string;
  session_key: string;
  thread_id: string;
  status: TurnInfo["status"];
  stop_reason: string | null;
  user_message_id: string;
  start_seq: number;
  started_at: number;
  ended_at: number | null;
  timings: string | null;
  usage: string | null;
  error: string | null;
}

export class SessionQueries {
  private readonly stmts;
  /** Statements prepared on first use (preparing costs more than running a small one). */
  private readonly prepared = new Map<string, Database.Statement<unknown[], unknown>>();

  constructor(
    readonly db: Database.Database,
    readonly now: () => number,
    /** Exact token counts saved with appended messages (rows.ts); none when absent. */
    private readonly countTokens?: MessageTokenCounter,
  ) {
    this.stmts = {
      session: db.prepare<[string], SessionRow>("SELECT * FROM sessions WHERE key = ?"),
      insertSession: db.prepare("INSERT INTO sessions (key, created_at, updated_at, metadata) VALUES (?, ?, ?, ?)"),
      setCurrent: db.prepare("UPDATE sessions SET current_thread_id = ?, updated_at = ? WHERE key = ?"),
      touchSession: db.prepare("UPDATE sessions SET updated_at = ? WHERE key = ?"),
      thread: db.prepare<[string], ThreadRow>("SELECT * FROM threads WHERE id = ?"),
      insertThread: db.prepare(
        "INSERT INTO threads (id, session_key, name, status, created_at, updated_at) VALUES (?, ?, ?, 'active', ?, ?)",
      ),
      touchThread: db.prepare("UPDATE threads SET updated_at = ? WHERE id = ?"),
      maxSeq: db.prepare<[string], { s: number | null }>("SELECT MAX(seq) AS s FROM messages WHERE thread_id = ?"),
      insertMessage: db.prepare(`INSERT INTO messages (${MESSAGE_COLUMNS}) VALUES (${MESSAGE_PARAMS})`),
      rowsFrom: db.prepare<[string, number], MessageRow>(
        "SELECT * FROM messages WHERE thread_id = ? AND seq >= ? ORDER BY seq",
      ),
      rowsFromDesc: db.prepare<[string, number], MessageRow>(
        "SELECT * FROM messages WHERE thread_id = ? AND seq >= ? ORDER BY seq DESC",
      ),
      rowAt: db.prepare<[string, number], MessageRow>("SELECT * FROM messages WHERE thread_id = ? AND seq = ?"),
      // Raw: an array per row built by better-sqlite3 costs half an object with named keys (rowFromRaw).
      rowsBetween: db
        .prepare<[string, number, number], RawMessageRow>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE thread_id = ? AND seq BETWEEN ? AND ?`)
        .raw(),
      // Raw rows ([id, seq]): no object per row, and the content is never read.
      placesDesc: db
        .prepare<[string, number, number, number], RowPlace>(
          "SELECT id, seq FROM messages WHERE thread_id = ? AND seq >= ? AND seq < ? ORDER BY seq DESC LIMIT ?",
        )
        .raw(),
      messageById: db.prepare<[string], MessageRow>("SELECT * FROM messages WHERE id = ?"),
      count: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM messages WHERE thread_id = ?"),
      turn: db.prepare<[string], TurnRow>("SELECT * FROM turns WHERE id = ?"),
      turnRows: db.prepare<[string, number, string], MessageRow>(
        "SELECT * FROM messages WHERE thread_id = ? AND seq > ? AND turn_id = ? ORDER BY seq",
      ),
      turnRowIds: db
        .prepare<[string, number, string], string>("SELECT id FROM messages WHERE thread_id = ? AND seq > ? AND turn_id = ? ORDER BY seq")
        .pluck(),
    };
  }
  /** A prepared statement for `sql`, cached for the life of the database handle. */
  prepare<P extends unknown[] | object = unknown[], R = unknown>(sql: string): Database.Statement<P, R> {
    let stmt = this.prepared.get(sql);
    if (!stmt) {
      stmt = this.db.prepare<unknown[], unknown>(sql);
      this.prepared.set(sql, stmt);
    }
    return stmt as unknown as Database.Statement<P, R>;
  }


  // ── sessions ────────────────────────────────────────────────────────────────────────────

  session(key: string): SessionRow | undefined {
    return this.stmts.session.get(key);
  }

  /** Creates the session and its first thread when missing; returns the row. */
  ensureSession(key: string, metadata: Record<string, unknown> = {}): SessionRow {
    const existing = this.session(key);
    if (existing?.current_thread_id) return existing;
    const now = this.now();
    if (!existing) this.stmts.insertSession.run(key, now, now, JSON.stringify(metadata));
    const thread = this.createThread(key, null);
    this.stmts.setCurrent.run(thread.id, now, key);
    return this.session(key)!;
  }

  requireSession(key: string): SessionRow {
    const row = this.session(key);
    if (!row) throw new SessionStoreError(`no session ${JSON.stringify(key)}`);
    return row;
  }

  touchSession(key: string): void {
    this.stmts.touchSession.run(this.now(), key);
  }

  sessionInfo(row: SessionRow): SessionInfo {
    const threadId = row.current_thread_id ?? "";
    return {
      key: row.key,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      metadata: JSON.parse(row.metadata) as Record<string, unknown>,
      currentThreadId: threadId,
      messageCount: threadId ? this.messageCount(threadId) : 0,
    };
  }

  // ── threads ─────────────────────────────────────────────────────────────────────────────

  thread(id: string): ThreadRow | undefined {
    return this.stmts.thread.get(id);
  }

  requireThread(id: string): ThreadRow {
    const row = this.thread(id);
    if (!row) throw new SessionStoreError(`no thread ${JSON.stringify(id)}`);
    return row;
  }

  createThread(sessionKey: string, name: string | null): ThreadRow {
    const id = newId("thr");
    const now = this.now();
    this.stmts.insertThread.run(id, sessionKey, name, now, now);
    return this.thread(id)!;
  }

  /** The session's current thread, creating session and thread if needed. */
  currentThread(sessionKey: string): ThreadRow {
    const session = this.ensureSession(sessionKey);
    return this.requireThread(session.current_thread_id!);
  }

  setCurrentThread(sessionKey: string, threadId: string): void {
    this.stmts.setCurrent.run(threadId, this.now(), sessionKey);
  }

  threadInfo(row: ThreadRow, currentId: string | null): ThreadInfo {
    return {
      id: row.id,
      sessionKey: row.session_key,
      name: row.name,
      title: row.title ?? null,
      status: row.status,
      current: row.id === currentId,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      messageCount: this.messageCount(row.id),
    };
  }

  // ── messages ────────────────────────────────────────────────────────────────────────────

  messageCount(threadId: string): number {
    return this.stmts.count.get(threadId)!.n;
  }

  /** The next free seq: one index probe, whatever the thread's length. */
  nextSeq(threadId: string): number {
    return (this.stmts.maxSeq.get(threadId)!.s ?? 0) + 1;
  }

  /**
   * Appends messages at the end of the thread; returns the seq of the first one. Messages outside
   * a turn touch the thread's `updated_at` here; a turn's touch it once, when the turn closes
   * (`touchThread`): each commit that changes the threads row writes one more page to the log.
   */
  append(threadId: string, messages: readonly Message[], turnId: string | null): number {
    const first = this.nextSeq(threadId);
    let seq = first;
    for (const message of messages) this.stmts.insertMessage.run(messageToRow(message, threadId, seq++, turnId, this.countTokens));
    if (messages.length && turnId === null) this.touchThread(threadId);
    return first;
  }

  touchThread(threadId: string): void {
    this.stmts.touchThread.run(this.now(), threadId);
  }

  rowsFrom(threadId: string, fromSeq: number): MessageRow[] {
    return this.stmts.rowsFrom.all(threadId, fromSeq);
  }

  /** Newest first, lazily: budgeted loads stop reading once they have enough. */
  iterateNewestFirst(threadId: string, fromSeq: number): IterableIterator<MessageRow> {
    return this.stmts.rowsFromDesc.iterate(threadId, fromSeq);
  }

  /** Up to `limit` rows' `[id, seq]` below `beforeSeq` (and at or after `fromSeq`), newest first. */
  placesNewestFirst(threadId: string, fromSeq: number, beforeSeq: number, limit: number): RowPlace[] {
    return this.stmts.placesDesc.all(threadId, fromSeq, beforeSeq, limit);
  }

  /** Rows from `fromSeq` to `toSeq`, both included. */
  rowsBetween(threadId: string, fromSeq: number, toSeq: number): MessageRow[] {
    return this.stmts.rowsBetween.all(threadId, fromSeq, toSeq).map(rowFromRaw);
  }

  rowAt(threadId: string, seq: number): MessageRow | undefined {
    return this.stmts.rowAt.get(threadId, seq);
  }

  messageRow(id: string): MessageRow | undefined {
    return this.stmts.messageById.get(id);
  }

  /** Unanswered calls of the thread's last assistant block (reads only the tail). */
  openCallsAtTail(threadId: string): ToolCallPart[] {
    const tail: Message[] = [];
    for (const row of this.iterateNewestFirst(threadId, 0)) {
      tail.unshift(rowToMessage(row));
      if (row.role !== "tool") break;
    }
    return unansweredToolCalls(tail);
  }

  // ── turns ───────────────────────────────────────────────────────────────────────────────

  turn(id: string): TurnRow | undefined {
    return this.stmts.turn.get(id);
  }

  /** Rows a turn added after its user message, oldest first. */
  rowsFromTurn(turn: TurnRow): MessageRow[] {
    return this.stmts.turnRows.all(turn.thread_id, turn.start_seq, turn.id);
  }

  /** The ids of `rowsFromTurn`. */
  turnRowIds(turn: TurnRow): string[] {
    return this.stmts.turnRowIds.all(turn.thread_id, turn.start_seq, turn.id);
  }

  requireTurn(id: string): TurnRow {
    const row = this.turn(id);
    if (!row) throw new SessionStoreError(`no turn ${JSON.stringify(id)}`);
    return row;
  }
}
