/**
 * The default `SessionStore`: one SQLite file (`<home>/state.db`) shared by every nanobot
 * process of a home. Writes are short `BEGIN IMMEDIATE` transactions retried on busy; reads
 * run in a deferred transaction so they see one snapshot.
 */
import { patchedMetadataJson } from "./metadata-patch.js";
import type Database from "better-sqlite3";
import { stateDbPath } from "../config/paths.js";
import { silentLogger } from "../core/logger.js";
import type { Logger } from "../core/logger.js";
import type { MessageTokenCounter } from "../core/token-counts.js";
import type { Checkpoint, Message, RunResult, ToolMessage, UserMessage } from "../core/index.js";
import { BudgetTrimmer, roughTokenEstimate } from "./history.js";
import { sanitizeToolResults } from "./repair.js";
import { ParsedMessages } from "./parsed-messages.js";
import { rowToMessage } from "./rows.js";
import type { MessageRow } from "./rows.js";
import { DEFAULT_RETRY, openDatabase, readTransaction, writeTransaction } from "./sqlite-db.js";
import type { RetryPolicy } from "./sqlite-db.js";
import { SessionQueries } from "./sqlite-queries.js";
import { ThreadPlaces } from "./thread-places.js";
import { WalCheckpointer } from "./wal-checkpointer.js";
import type { SessionRow, ThreadRow, TurnRow } from "./sqlite-queries.js";
import * as records from "./sqlite-records.js";
import type { ImportResult, ImportThreadInput, PortableSessionStore, SessionRecords, ThreadExport } from "./records.js";
import * as threads from "./sqlite-threads.js";
import * as turns from "./sqlite-turns.js";
import type { TurnOps } from "./sqlite-turns.js";
import { SessionStoreError } from "./types.js";
import type {
  CloseTurnOptions,
  ConsolidationPoint,
  LoadHistoryOptions,
  MetadataPatch,
  SessionInfo,
  ThreadInfo,
  TurnHandle,
  TurnInfo,
} from "./types.js";

/** Rows whose places are read at once when replaying a history (most turns need one page). */
const HISTORY_PAGE = 64;
/** Up to this many rows missing from the cache are read one by one; more in one range read. */
const POINT_READS = 4;

export interface SqliteSessionStoreOptions {
  /** Database file; defaults to `<home>/state.db`. */
  path?: string;
  home?: string;
  busyTimeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  now?: () => number;
  logger?: Logger;
  /** Heap, in bytes by estimate, for messages kept parsed for history replays (default 8 MiB). */
  historyCacheBytes?: number;
  /** Exact token counts to save with each message written (read back with it); none when absent. */
  tokenCounter?: MessageTokenCounter;
}

export class SqliteSessionStore implements PortableSessionStore {
  readonly path: string;
  private readonly db: Database.Database;
  private readonly q: SessionQueries;
  private readonly ops: TurnOps;
  private readonly retry: RetryPolicy;
  private readonly log: Logger;
  private checkpointer: WalCheckpointer | undefined;
  /** Wakes the background checkpointer, if there is one, when it went to sleep on an idle database. */
  private readonly afterCommit = (): void => this.checkpointer?.noteCommit();
  private readonly onRetry = (attempt: number, delayMs: number): void => this.log.debug("state database busy, retrying", { attempt, delayMs });
  /** Rows parsed by earlier history loads (every turn replays mostly the same ones). */
  private readonly parsed: ParsedMessages;
  /** Where those rows are in their threads, followed through this connection's changes. */
  private readonly places: ThreadPlaces;

  constructor(options: SqliteSessionStoreOptions) {
    const path = options.path ?? (options.home ? stateDbPath(options.home) : undefined);
    if (!path) throw new SessionStoreError("SqliteSessionStore needs a path or a home directory");
    this.path = path;
    this.log = options.logger ?? silentLogger;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.db = openDatabase(path, { busyTimeoutMs: options.busyTimeoutMs });
    this.parsed = new ParsedMessages(options.historyCacheBytes);
    const now = options.now ?? Date.now;
    this.q = new SessionQueries(this.db, now, options.tokenCounter);
    this.places = new ThreadPlaces(this.db, (threadId, fromSeq, beforeSeq, limit) => this.q.placesNewestFirst(threadId, fromSeq, beforeSeq, limit));
    this.ops = {
      q: this.q,
      now,
      onDropped: (turnId, count) => this.log.warn("dropped invalid tool results while saving", { turnId, count }),
    };
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────────

  async getSession(key: string): Promise<SessionInfo | null> {
    return this.read(() => {
      const row = this.q.session(key);
      return row ? this.q.sessionInfo(row) : null;
    });
  }

  async sessionMetadata(key: string): Promise<Record<string, unknown> | null> {
    // One statement: no transaction needed for a consistent read.
    const row = this.q.session(key);
    return row ? (JSON.parse(row.metadata) as Record<string, unknown>) : null;
  }

  async ensureSession(key: string, metadata?: Record<string, unknown>): Promise<SessionInfo> {
    return this.write(() => this.q.sessionInfo(this.q.ensureSession(key, metadata)));
  }

  async listSessions(): Promise<SessionInfo[]> {
    return this.read(() =>
      this.q
        .prepare<[], SessionRow>("SELECT * FROM sessions ORDER BY updated_at DESC, key")
        .all()
        .map((row) => this.q.sessionInfo(row)),
    );
  }

  async updateMetadata(key: string, patch: Record<string, unknown>): Promise<void> {
    await this.write(() => this.patchMetadata(key, patch));
  }

  async mutateMetadata(key: string, field: string, next: (current: unknown) => unknown): Promise<unknown> {
    // One synchronous write transaction: nothing else writes between the read and the write.
    return this.write(() => {
      let value: unknown;
      this.patchMetadata(key, (metadata) => ({ [field]: (value = next(metadata[field])) }));
      return value;
    });
  }

  /** Inside a write transaction; `patch` may be computed from the metadata as it is. */
  private patchMetadata(key: string, patch: MetadataPatch): void {
    const row = this.q.ensureSession(key);
    this.q.prepare("UPDATE sessions SET metadata = ?, updated_at = ? WHERE key = ?").run(patchedMetadataJson(row.metadata, patch), this.ops.now(), key);
  }

  /** Inside a write transaction: the closed turn's session shows the activity, with the closing's metadata patch if any. */
  private patchTurnSession(sessionKey: string, options: CloseTurnOptions | undefined): void {
    if (options?.metadata) this.patchMetadata(sessionKey, options.metadata);
    else this.q.touchSession(sessionKey);
  }

  async deleteSession(key: string): Promise<boolean> {
    return this.write(() => {
      if (!this.q.session(key)) return false;
      // Threads, messages, turns and checkpoints follow by ON DELETE CASCADE.
      this.q.prepare("DELETE FROM sessions WHERE key = ?").run(key);
      return true;
    });
  }

  // ── history ─────────────────────────────────────────────────────────────────────────────

  async loadHistory(sessionKey: string, options: LoadHistoryOptions = {}): Promise<Message[]> {
    return this.read(() => {
      const thread = this.resolveThread(sessionKey, options.threadId);
      if (!thread) return [];
      // The snapshot has begun (the thread row was read): did another connection write before it?
      this.places.validate();
      const summaryRow = thread.summary_seq === null ? undefined : this.q.rowAt(thread.id, thread.summary_seq);
      const summary = summaryRow ? this.parsed.messageOf(summaryRow) : undefined;
      const head = summary ? [summary] : [];
      if (options.tokenBudget === undefined) {
        const all: Message[] = [];
        this.eachNewestFirst(thread, (m) => {
          all.push(m);
          return true;
        });
        return [...head, ...all.reverse()];
      }
      const estimate = options.estimate ?? roughTokenEstimate;
      const trimmer = new BudgetTrimmer(options.tokenBudget - (summary ? estimate(summary) : 0), estimate);
      this.eachNewestFirst(thread, (m) => trimmer.push(m));
      return [...head, ...trimmer.result()];
    });
  }

  /**
   * The thread's replayed messages, newest first, until `take` returns false. Rows are read a
   * page of places at a time; only rows not parsed before are loaded whole (see ParsedMessages):
   * a few by place, many (a cold cache) with one range read.
   */
  private eachNewestFirst(thread: ThreadRow, take: (message: Message) => boolean): void {
    for (let before = Number.MAX_SAFE_INTEGER; ; ) {
      const places = this.places.page(thread.id, thread.replay_seq, before, HISTORY_PAGE);
      // Plain loops: this runs for every replayed message of every turn.
      const missing: number[] = [];
      for (let i = 0; i < places.length; i++) {
        const place = places[i]!;
        if (place[1] !== thread.summary_seq && !this.parsed.get(thread.id, place)) missing.push(place[1]);
      }
      const rows = this.rowsAt(thread.id, missing);
      for (let i = 0; i < places.length; i++) {
        const place = places[i]!;
        const seq = place[1];
        if (seq === thread.summary_seq) continue;
        // A row parsed just now can push the cache over its budget and clear it: a place found
        // cached a moment ago is then read again.
        const message = this.parsed.get(thread.id, place) ?? this.parsed.parse(rows.get(seq) ?? this.q.rowAt(thread.id, seq)!);
        if (!take(message)) return;
      }
      if (places.length < HISTORY_PAGE) return;
      before = places[places.length - 1]![1];
    }
  }

  /** Whole rows at `seqs` (newest first) of a thread, by seq. */
  private rowsAt(threadId: string, seqs: readonly number[]): Map<number, MessageRow> {
    const rows = new Map<number, MessageRow>();
    if (seqs.length <= POINT_READS) {
      for (const seq of seqs) rows.set(seq, this.q.rowAt(threadId, seq)!);
    } else {
      for (const row of this.q.rowsBetween(threadId, seqs[seqs.length - 1]!, seqs[0]!)) rows.set(row.seq, row);
    }
    return rows;
  }

  async loadMessages(sessionKey: string, options: { threadId?: string } = {}): Promise<Message[]> {
    return this.read(() => {
      const thread = this.resolveThread(sessionKey, options.threadId);
      return thread ? this.q.rowsFrom(thread.id, 0).map(rowToMessage) : [];
    });
  }

  async appendMessages(sessionKey: string, messages: Message[]): Promise<void> {
    await this.write(() => {
      const thread = this.q.currentThread(sessionKey);
      const open = this.q.openCallsAtTail(thread.id).map((c) => c.id);
      const { kept, dropped } = sanitizeToolResults(messages, open);
      if (dropped.length) this.log.warn("dropped invalid tool results while appending", { sessionKey, count: dropped.length });
      this.q.append(thread.id, kept, null);
      this.q.touchSession(sessionKey);
    });
  }

  async markConsolidated(sessionKey: string, point: ConsolidationPoint): Promise<void> {
    await this.write(() => {
      const thread = this.q.currentThread(sessionKey);
      const from = this.q.messageRow(point.fromMessageId);
      if (!from || from.thread_id !== thread.id) {
        throw new SessionStoreError(`message ${point.fromMessageId} is not in the current thread of ${sessionKey}`);
      }
      let summarySeq: number | null = null;
      if (point.summary) {
        const summary = { ...point.summary, meta: { ...point.summary.meta, summary: true } } as Message;
        summarySeq = this.q.append(thread.id, [summary], null);
      }
      this.q.prepare("UPDATE threads SET replay_seq = ?, summary_seq = ? WHERE id = ?").run(from.seq, summarySeq, thread.id);
    });
  }

  // ── turns ───────────────────────────────────────────────────────────────────────────────

  async beginTurn(sessionKey: string, userMessage: UserMessage): Promise<TurnHandle> {
    const handle = await this.write(() => turns.beginTurn(this.ops, sessionKey, userMessage));
    if (handle.recoveredTurns) this.log.warn("closed dangling turns", { sessionKey, count: handle.recoveredTurns });
    return handle;
  }

  async resumeTurn(sessionKey: string, results: readonly ToolMessage[]): Promise<{ handle: TurnHandle; messages: Message[] }> {
    const resumed = await this.write(() => turns.beginResumedTurn(this.ops, sessionKey, results));
    if (resumed.handle.recoveredTurns) this.log.warn("closed dangling turns", { sessionKey, count: resumed.handle.recoveredTurns });
    return resumed;
  }

  /**
   * Reopens the turn of a stored user message that a process which died mid-turn left, so a
   * keyed retry of that request (the gateway's Idempotency-Key) answers it after a restart.
   */
  async reopenInterruptedTurn(sessionKey: string, userMessageId: string): Promise<TurnHandle> {
    const handle = await this.write(() => turns.reopenInterruptedTurn(this.ops, sessionKey, userMessageId));
    if (handle.recoveredTurns) this.log.warn("closed dangling turns", { sessionKey, count: handle.recoveredTurns });
    this.log.info("reopened an interrupted turn", { sessionKey, turnId: handle.turnId });
    return handle;
  }

  async saveCheckpoint(turnId: string, checkpoint: Checkpoint): Promise<void> {
    await this.write(() => turns.saveCheckpoint(this.ops, turnId, checkpoint));
  }

  async completeTurn(turnId: string, result: RunResult, options?: CloseTurnOptions): Promise<void> {
    await this.write(() => {
      this.patchTurnSession(turns.completeTurn(this.ops, turnId, result), options);
    });
  }

  async failTurn(turnId: string, error: unknown, options?: CloseTurnOptions): Promise<void> {
    await this.write(() => {
      this.patchTurnSession(turns.failTurn(this.ops, turnId, error), options);
    });
  }

  async stopTurn(turnId: string, checkpoint?: Checkpoint, options?: CloseTurnOptions): Promise<void> {
    await this.write(() => {
      this.patchTurnSession(turns.stopTurn(this.ops, turnId, checkpoint), options);
    });
  }

  async recoverDanglingTurns(sessionKey: string): Promise<number> {
    // Nearly always there is nothing to recover: one indexed read spares the write lock and a commit.
    const pending = this.q.prepare<[string], { one: number }>("SELECT 1 AS one FROM turns WHERE session_key = ? AND status = 'pending' LIMIT 1").get(sessionKey);
    if (!pending) return 0;
    return this.write(() => turns.recoverDanglingTurns(this.ops, sessionKey));
  }

  async getTurn(turnId: string): Promise<TurnInfo | null> {
    return this.read(() => {
      const row = this.q.turn(turnId);
      return row ? turnInfo(row) : null;
    });
  }

  // ── threads ─────────────────────────────────────────────────────────────────────────────

  async listThreads(sessionKey: string): Promise<ThreadInfo[]> {
    return this.read(() => threads.listThreads(this.q, sessionKey));
  }

  async newThread(sessionKey: string): Promise<ThreadInfo> {
    return this.write(() => threads.newThread(this.q, sessionKey));
  }

  async openThread(sessionKey: string, name: string): Promise<ThreadInfo> {
    return this.write(() => threads.openThread(this.q, sessionKey, name));
  }

  async switchThread(sessionKey: string, threadId: string): Promise<ThreadInfo> {
    return this.write(() => threads.switchThread(this.q, sessionKey, threadId));
  }

  async renameThread(threadId: string, name: string | null): Promise<ThreadInfo> {
    return this.write(() => threads.renameThread(this.q, threadId, name));
  }

  async deleteThread(threadId: string): Promise<boolean> {
    return this.write(() => threads.deleteThread(this.q, threadId));
  }

  // ── moving sessions (records.ts) ────────────────────────────────────────────────────────

  async exportThread(key: string, threadId?: string): Promise<ThreadExport> {
    return this.read(() => records.exportThread(this.q, key, threadId));
  }

  async importThread(input: ImportThreadInput): Promise<ImportResult> {
    return this.write(() => records.importThread(this.q, input));
  }

  async readRecords(key: string): Promise<SessionRecords | null> {
    return this.read(() => records.readRecords(this.q, key));
  }

  async writeRecords(rows: SessionRecords): Promise<void> {
    await this.write(() => records.writeRecords(this.q, rows));
  }

  // ── import support and lifecycle ────────────────────────────────────────────────────────

  /**
   * Runs `fn` with the synchronous query layer inside one write transaction. For importers
   * and tools in this folder that need several steps to be atomic.
   */
  async transaction<T>(fn: (q: SessionQueries) => T): Promise<T> {
    return this.write(() => fn(this.q));
  }

  /** Same, as a read snapshot. */
  async snapshot<T>(fn: (q: SessionQueries) => T): Promise<T> {
    return this.read(() => fn(this.q));
  }

  /**
   * Moves WAL checkpoints to a worker thread (see WalCheckpointer): for servers, where a commit
   * that also copies the log into the database would stall every request for its duration.
   * Returns the checkpointer; calling it again returns the same one.
   */
  checkpointInBackground(options: { intervalMs?: number } = {}): WalCheckpointer | undefined {
    if (this.path === ":memory:" || !this.db.open) return undefined;
    this.checkpointer ??= new WalCheckpointer({ db: this.db, path: this.path, intervalMs: options.intervalMs, logger: this.log });
    return this.checkpointer;
  }

  async close(): Promise<void> {
    await this.checkpointer?.close();
    // The last connection to close folds the log into the database and removes it.
    if (this.db.open) this.db.close();
  }

  private resolveThread(sessionKey: string, threadId: string | undefined) {
    if (threadId) {
      const thread = this.q.requireThread(threadId);
      if (thread.session_key !== sessionKey) throw new SessionStoreError(`thread ${threadId} belongs to another session`);
      return thread;
    }
    const session = this.q.session(sessionKey);
    return session?.current_thread_id ? this.q.thread(session.current_thread_id) : undefined;
  }

  private write<T>(fn: () => T): Promise<T> {
    return writeTransaction(this.db, fn, this.retry, this.onRetry, this.afterCommit);
  }

  private read<T>(fn: () => T): Promise<T> {
    return readTransaction(this.db, fn, this.retry);
  }
}

function turnInfo(row: TurnRow): TurnInfo {
  return {
    id: row.id,
    sessionKey: row.session_key,
    threadId: row.thread_id,
    status: row.status,
    stopReason: (row.stop_reason as TurnInfo["stopReason"]) ?? null,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    error: row.error,
    usage: row.usage ? (JSON.parse(row.usage) as TurnInfo["usage"]) : null,
  };
}
