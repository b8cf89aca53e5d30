/**
 * The PostgreSQL `SessionStore` (`store: { url: "postgres://…" }`): the SQLite store's tables,
 * rules and results on a server several processes and machines can share. Every write is one
 * transaction holding its session's lock (pg-db.ts), so writers of a session see the same
 * one-at-a-time behaviour SQLite's single writer gives, and sessions do not wait for each other.
 * The schema is migrated on first use (or ahead of time with `nanobot store migrate`).
 */
import { patchedMetadataJson } from "./metadata-patch.js";
import type pg from "pg";
import type { PoolClient } from "pg";
import { silentLogger } from "../core/logger.js";
import type { Logger } from "../core/logger.js";
import type { MessageTokenCounter } from "../core/token-counts.js";
import type { Checkpoint, Message, RunResult, ToolMessage, UserMessage } from "../core/index.js";
import { PgDeliveries } from "./pg-deliveries.js";
import { PgLeadership } from "./pg-leader.js";
import { PgSessionLeases } from "./pg-leases.js";
import { LOCK_KEY_SQL } from "./pg-lock-connection.js";
import { PgWorkerId } from "./pg-worker-id.js";
import { createPool, lockSession, pgReadTransaction, pgWriteTransaction, validSchemaName } from "./pg-db.js";
import { PgQueries } from "./pg-queries.js";
import * as records from "./pg-records.js";
import { PgEventRelay } from "./pg-event-relay.js";
import { migratePg } from "./pg-schema.js";
import type { ClusterRelay } from "../cluster/cluster-relay.js";
import type { PgMigrationResult } from "./pg-schema.js";
import * as threads from "./pg-threads.js";
import * as turns from "./pg-turns.js";
import type { PgTurnOps } from "./pg-turns.js";
import type { ImportResult, ImportThreadInput, PortableSessionStore, SessionRecords, ThreadExport } from "./records.js";
import { sanitizeToolResults } from "./repair.js";
import { PgHistory } from "./pg-history.js";
import { rowToMessage } from "./rows.js";
import { DEFAULT_RETRY } from "./sqlite-db.js";
import type { RetryPolicy } from "./sqlite-db.js";
import type { SessionRow, ThreadRow, TurnRow } from "./sqlite-queries.js";
import { SessionStoreError } from "./types.js";
import type { CloseTurnOptions, ConsolidationPoint, LoadHistoryOptions, Leadership, MetadataPatch, SessionInfo, SessionLease, ThreadInfo, TurnHandle, TurnInfo } from "./types.js";

/** Open turns whose session the store remembers (see `openTurns`). */
const MAX_OPEN_TURNS = 10_000;

export interface PgSessionStoreOptions {
  /** `postgres://user@host:port/database`; `?schema=name` keeps the tables in that schema. */
  url: string;
  /** Keep the tables in this schema instead of `public` (tests, several nanobots on one database); wins over `?schema=`. */
  schema?: string;
  /** Pool size (default 10). */
  maxConnections?: number;
  retry?: Partial<RetryPolicy>;
  now?: () => number;
  logger?: Logger;
  /** Exact token counts to save with each message written (read back with it); none when absent. */
  tokenCounter?: MessageTokenCounter;
  /** Heartbeat of the connections holding session leases (default 5 s). */
  leaseHeartbeatMs?: number;
  /** Connections holding session leases at once, one per running turn (default 16); past it turns wait in order. */
  maxLeaseConnections?: number;
  /** Time between a follower's tries for leadership (default 2 s). */
  leaderRetryMs?: number;
  /** Heap the parsed-history cache may hold (default 8 MiB; see ParsedMessages). */
  historyCacheBytes?: number;
}

export class PgSessionStore implements PortableSessionStore {
  readonly url: string;
  readonly schema: string | undefined;
  private readonly pool: Promise<pg.Pool>;
  private readonly retry: RetryPolicy;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly tokenCounter: MessageTokenCounter | undefined;
  private migrated: Promise<PgMigrationResult> | undefined;
  private readonly leases: PgSessionLeases;
  private closed: Promise<void> | undefined;
  /** The server URL without nanobot's `schema` parameter (lock connections need no search path). */
  private readonly lockUrl: string;
  private readonly leaderRetryMs: number | undefined;
  private readonly workers: PgWorkerId;
  /** Leases `beginTurn` took for a caller that held none, released when that turn closes. */
  private readonly turnLeases = new Map<string, SessionLease>();
  /**
   * The session of each turn this store began and has not closed: a turn's session never
   * changes, so its writes (checkpoints, the close) take the session's lock without first
   * reading the turn row for its key.
   */
  private readonly openTurns = new Map<string, string>();
  private readonly deliveries: PgDeliveries;
  /** Replays histories from the rows' places and the messages parsed before (pg-history.ts). */
  private readonly history: PgHistory;

  constructor(options: PgSessionStoreOptions) {
    const { url, schema } = splitSchema(options.url);
    this.url = options.url;
    this.schema = options.schema ?? schema;
    this.log = options.logger ?? silentLogger;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.now = options.now ?? Date.now;
    this.tokenCounter = options.tokenCounter;
    if (this.schema !== undefined) validSchemaName(this.schema);
    this.pool = createPool({ url, schema: this.schema, max: options.maxConnections });
    // Nothing is lost by leaving a failed load unobserved here: every use awaits this promise.
    void this.pool.catch(() => undefined);
    this.lockUrl = url;
    this.leaderRetryMs = options.leaderRetryMs;
    this.deliveries = new PgDeliveries(this.now);
    this.history = new PgHistory(options.historyCacheBytes);
    this.workers = new PgWorkerId({ url, namespace: this.schema ?? "public", pool: async () => (await this.migrate(), this.pool) });
    this.leases = new PgSessionLeases({
      url,
      namespace: this.schema ?? "public",
      heartbeatMs: options.leaseHeartbeatMs,
      maxConnections: options.maxLeaseConnections,
      cancel: async (pid) => void (await (await this.pool).query("SELECT pg_cancel_backend($1)", [pid])),
    });
  }

  /** Applies pending migrations (once per store; every call waits for the same run). */
  migrate(): Promise<PgMigrationResult> {
    this.migrated ??= this.pool.then((pool) => migratePg(pool, { schema: this.schema })).catch((error: unknown) => {
      this.migrated = undefined;
      throw error;
    });
    return this.migrated;
  }

  // ── sessions ────────────────────────────────────────────────────────────────────────────

  async getSession(key: string): Promise<SessionInfo | null> {
    return this.read(async (q) => {
      const row = await q.session(key);
      return row ? q.sessionInfo(row) : null;
    });
  }

  async sessionMetadata(key: string): Promise<Record<string, unknown> | null> {
    await this.migrate();
    const { rows } = await (await this.pool).query<Pick<SessionRow, "metadata">>("SELECT metadata FROM sessions WHERE key = $1", [key]);
    return rows[0] ? (JSON.parse(rows[0].metadata) as Record<string, unknown>) : null;
  }

  async ensureSession(key: string, metadata?: Record<string, unknown>): Promise<SessionInfo> {
    return this.write({ session: key }, async (q) => q.sessionInfo(await q.ensureSession(key, metadata)));
  }

  async listSessions(): Promise<SessionInfo[]> {
    return this.read(async (q) => {
      const rows = await q.all<SessionRow>("SELECT * FROM sessions ORDER BY updated_at DESC, key");
      const out: SessionInfo[] = [];
      for (const row of rows) out.push(await q.sessionInfo(row));
      return out;
    });
  }

  async updateMetadata(key: string, patch: Record<string, unknown>): Promise<void> {
    await this.write({ session: key }, (q) => this.patchMetadata(q, key, patch));
  }

  async mutateMetadata(key: string, field: string, next: (current: unknown) => unknown): Promise<unknown> {
    // The session's write lock is held from the read to the write: no other worker interleaves.
    return this.write({ session: key }, async (q) => {
      let value: unknown;
      await this.patchMetadata(q, key, (metadata) => ({ [field]: (value = next(metadata[field])) }));
      return value;
    });
  }

  /** `patch` may be computed from the metadata as it is (under the session's write lock). */
  private async patchMetadata(q: PgQueries, key: string, patch: MetadataPatch): Promise<void> {
    const row = await q.ensureSession(key);
    await q.run("UPDATE sessions SET metadata = $1, updated_at = $2 WHERE key = $3", [patchedMetadataJson(row.metadata, patch), this.now(), key]);
  }

  async deleteSession(key: string): Promise<boolean> {
    // Threads, messages, turns and checkpoints follow by ON DELETE CASCADE.
    return this.write({ session: key }, async (q) => (await q.run("DELETE FROM sessions WHERE key = $1", [key])) > 0);
  }

  // ── history ─────────────────────────────────────────────────────────────────────────────

  async loadHistory(sessionKey: string, options: LoadHistoryOptions = {}): Promise<Message[]> {
    return this.read(async (q) => {
      const thread = await this.resolveThread(q, sessionKey, options.threadId);
      return thread ? this.history.load(q, thread, options) : [];
    });
  }

  async loadMessages(sessionKey: string, options: { threadId?: string } = {}): Promise<Message[]> {
    return this.read(async (q) => {
      const thread = await this.resolveThread(q, sessionKey, options.threadId);
      return thread ? (await q.rowsFrom(thread.id, 0)).map(rowToMessage) : [];
    });
  }

  async appendMessages(sessionKey: string, messages: Message[]): Promise<void> {
    await this.write({ session: sessionKey }, async (q) => {
      const thread = await q.currentThread(sessionKey);
      const open = (await q.openCallsAtTail(thread.id)).map((c) => c.id);
      const { kept, dropped } = sanitizeToolResults(messages, open);
      if (dropped.length) this.log.warn("dropped invalid tool results while appending", { sessionKey, count: dropped.length });
      await q.append(thread.id, kept, null);
      await q.touchSession(sessionKey);
    });
  }

  async markConsolidated(sessionKey: string, point: ConsolidationPoint): Promise<void> {
    await this.write({ session: sessionKey }, async (q) => {
      const thread = await q.currentThread(sessionKey);
      const from = await q.messageRow(point.fromMessageId);
      if (!from || from.thread_id !== thread.id) {
        throw new SessionStoreError(`message ${point.fromMessageId} is not in the current thread of ${sessionKey}`);
      }
      let summarySeq: number | null = null;
      if (point.summary) {
        const summary = { ...point.summary, meta: { ...point.summary.meta, summary: true } } as Message;
        summarySeq = await q.append(thread.id, [summary], null);
      }
      await q.run("UPDATE threads SET replay_seq = $1, summary_seq = $2 WHERE id = $3", [from.seq, summarySeq, thread.id]);
    });
  }

  // ── turns ───────────────────────────────────────────────────────────────────────────────

  leaseSession(sessionKey: string, signal?: AbortSignal): Promise<SessionLease> {
    return this.leases.acquire(sessionKey, signal);
  }

  /** Lease connections in use by this worker, and leases waiting for one at the cap. */
  leaseConnectionUse(): { inUse: number; queued: number } {
    return this.leases.connectionUse();
  }

  /** This worker's id in Idempotency-Key records (see pg-worker-id.ts). */
  workerId(): Promise<string> {
    return this.workers.id();
  }

  /** A worker is alive while its lock connection holds its lock. */
  async workerAlive(id: string): Promise<boolean> {
    return this.workers.alive(id);
  }

  /** Records a platform delivery id (`<channel>:<event id>`); true only for the first worker to record it. */
  async claimDelivery(key: string): Promise<boolean> {
    await this.migrate();
    return this.deliveries.claim(await this.pool, key);
  }

  leadership(group: string): Leadership {
    return new PgLeadership({
      url: this.lockUrl,
      lockName: `nanobot:leader:${this.schema ?? "public"}:${group}`,
      logger: this.log,
      ...(this.leaderRetryMs !== undefined ? { retryMs: this.leaderRetryMs } : {}),
    });
  }

  eventRelay(): ClusterRelay {
    return new PgEventRelay({ url: this.lockUrl, namespace: this.schema ?? "public", logger: this.log });
  }

  /**
   * Under the session's lease (the caller's, or one taken here for this turn): a turn still
   * pending then belongs to a worker that lost its lease, so closing it is safe.
   */
  async beginTurn(sessionKey: string, userMessage: UserMessage): Promise<TurnHandle> {
    const handle = await this.underLease(sessionKey, (turn) => turn.turnId, () =>
      this.write({ session: sessionKey }, (q) => turns.beginTurn(this.ops(q), sessionKey, userMessage)),
    );
    if (handle.recoveredTurns) this.log.warn("closed dangling turns", { sessionKey, count: handle.recoveredTurns });
    return handle;
  }

  async resumeTurn(sessionKey: string, results: readonly ToolMessage[]): Promise<{ handle: TurnHandle; messages: Message[] }> {
    const resumed = await this.underLease(sessionKey, (r) => r.handle.turnId, () =>
      this.write({ session: sessionKey }, (q) => turns.beginResumedTurn(this.ops(q), sessionKey, results)),
    );
    if (resumed.handle.recoveredTurns) this.log.warn("closed dangling turns", { sessionKey, count: resumed.handle.recoveredTurns });
    return resumed;
  }

  /** Runs `begin` holding the session's lease; a lease taken here is kept by the new turn until it closes. */
  private async underLease<T>(sessionKey: string, turnOf: (begun: T) => string, begin: () => Promise<T>): Promise<T> {
    if (this.leases.holds(sessionKey)) return this.opened(sessionKey, turnOf, await begin());
    const lease = await this.leases.acquire(sessionKey);
    try {
      const begun = await begin();
      this.turnLeases.set(turnOf(begun), lease);
      return this.opened(sessionKey, turnOf, begun);
    } catch (error) {
      await lease.release();
      throw error;
    }
  }

  private opened<T>(sessionKey: string, turnOf: (begun: T) => string, begun: T): T {
    // Turns another worker or process closes never leave this map: bounded, cleared wholesale.
    if (this.openTurns.size >= MAX_OPEN_TURNS) this.openTurns.clear();
    this.openTurns.set(turnOf(begun), sessionKey);
    return begun;
  }

  async reopenInterruptedTurn(sessionKey: string, userMessageId: string): Promise<TurnHandle> {
    const handle = await this.underLease(sessionKey, (turn) => turn.turnId, () =>
      this.write({ session: sessionKey }, (q) => turns.reopenInterruptedTurn(this.ops(q), sessionKey, userMessageId)),
    );
    this.log.info("reopened an interrupted turn", { sessionKey, turnId: handle.turnId });
    return handle;
  }

  /** Closes a turn, then lets go of the lease `beginTurn` took for it. */
  private async closing(turnId: string, close: () => Promise<void>): Promise<void> {
    try {
      await close();
    } finally {
      this.openTurns.delete(turnId);
      const lease = this.turnLeases.get(turnId);
      this.turnLeases.delete(turnId);
      await lease?.release();
    }
  }

  async saveCheckpoint(turnId: string, checkpoint: Checkpoint): Promise<void> {
    await this.write({ turn: turnId }, (q) => turns.saveCheckpoint(this.ops(q), turnId, checkpoint));
  }

  async completeTurn(turnId: string, result: RunResult, options?: CloseTurnOptions): Promise<void> {
    await this.closing(turnId, () => this.write({ turn: turnId }, async (q) => this.patchTurnSession(q, await turns.completeTurn(this.ops(q), turnId, result), options)));
  }

  async failTurn(turnId: string, error: unknown, options?: CloseTurnOptions): Promise<void> {
    await this.closing(turnId, () => this.write({ turn: turnId }, async (q) => this.patchTurnSession(q, await turns.failTurn(this.ops(q), turnId, error), options)));
  }

  async stopTurn(turnId: string, checkpoint?: Checkpoint, options?: CloseTurnOptions): Promise<void> {
    await this.closing(turnId, () => this.write({ turn: turnId }, async (q) => this.patchTurnSession(q, await turns.stopTurn(this.ops(q), turnId, checkpoint), options)));
  }

  /** The closed turn's session shows the activity, with the closing's metadata patch if any (one UPDATE either way). */
  private async patchTurnSession(q: PgQueries, sessionKey: string, options: CloseTurnOptions | undefined): Promise<void> {
    if (options?.metadata) await this.patchMetadata(q, sessionKey, options.metadata);
    else await q.touchSession(sessionKey);
  }

  async recoverDanglingTurns(sessionKey: string): Promise<number> {
    await this.migrate();
    // Nearly always there is nothing to recover: one indexed read spares a serializable transaction.
    const { rowCount } = await (await this.pool).query("SELECT 1 FROM turns WHERE session_key = $1 AND status = 'pending' LIMIT 1", [sessionKey]);
    if (!rowCount) return 0;
    return this.write({ session: sessionKey }, async (q) => {
      // Without the lease, the pending turn is another worker's only if that worker holds it now.
      if (!this.leases.holds(sessionKey)) {
        const free = await q.one<{ ok: boolean }>(`SELECT pg_try_advisory_xact_lock(${LOCK_KEY_SQL}) AS ok`, [this.leases.lockName(sessionKey)]);
        if (!free?.ok) return 0;
      }
      return turns.recoverDanglingTurns(this.ops(q), sessionKey);
    });
  }

  async getTurn(turnId: string): Promise<TurnInfo | null> {
    await this.migrate();
    const { rows } = await (await this.pool).query<TurnRow>("SELECT * FROM turns WHERE id = $1", [turnId]);
    return rows[0] ? turnInfo(rows[0]) : null;
  }

  // ── threads ─────────────────────────────────────────────────────────────────────────────

  async listThreads(sessionKey: string): Promise<ThreadInfo[]> {
    return this.read((q) => threads.listThreads(q, sessionKey));
  }

  async newThread(sessionKey: string): Promise<ThreadInfo> {
    return this.write({ session: sessionKey }, (q) => threads.newThread(q, sessionKey));
  }

  async openThread(sessionKey: string, name: string): Promise<ThreadInfo> {
    return this.write({ session: sessionKey }, (q) => threads.openThread(q, sessionKey, name));
  }

  async switchThread(sessionKey: string, threadId: string): Promise<ThreadInfo> {
    return this.write({ session: sessionKey }, (q) => threads.switchThread(q, sessionKey, threadId));
  }

  async renameThread(threadId: string, name: string | null): Promise<ThreadInfo> {
    return this.write({ thread: threadId }, (q) => threads.renameThread(q, threadId, name));
  }

  async deleteThread(threadId: string): Promise<boolean> {
    return this.write({ thread: threadId }, (q) => threads.deleteThread(q, threadId));
  }

  // ── moving sessions (records.ts) ────────────────────────────────────────────────────────

  async exportThread(key: string, threadId?: string): Promise<ThreadExport> {
    return this.read((q) => records.exportThread(q, key, threadId));
  }

  async importThread(input: ImportThreadInput): Promise<ImportResult> {
    return this.write({ session: input.key }, (q) => records.importThread(q, input));
  }

  async readRecords(key: string): Promise<SessionRecords | null> {
    return this.read((q) => records.readRecords(q, key));
  }

  async writeRecords(rows: SessionRecords): Promise<void> {
    await this.write({ session: rows.session.key }, (q) => records.writeRecords(q, rows));
  }

  /** Safe to call twice. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      const leases = [...this.turnLeases.values()];
      this.turnLeases.clear();
      await Promise.all(leases.map((l) => l.release().catch(() => undefined)));
      await this.leases.close();
      await this.workers.close();
      // Waits for a migration still running, so no query is cut off by the pool ending.
      await this.migrated?.catch(() => undefined);
      await (await this.pool.catch(() => undefined))?.end();
    })();
    return this.closed;
  }

  // ── plumbing ────────────────────────────────────────────────────────────────────────────

  private ops(q: PgQueries): PgTurnOps {
    return { q, onDropped: (turnId, count) => this.log.warn("dropped invalid tool results while saving", { turnId, count }) };
  }

  private async resolveThread(q: PgQueries, sessionKey: string, threadId: string | undefined): Promise<ThreadRow | undefined> {
    if (threadId) {
      const thread = await q.requireThread(threadId);
      if (thread.session_key !== sessionKey) throw new SessionStoreError(`thread ${threadId} belongs to another session`);
      return thread;
    }
    return q.currentThreadIfAny(sessionKey);
  }

  /**
   * `fn` in a write transaction holding the lock of the session it touches (named directly, or
   * by one of its turns or threads, whose session never changes).
   */
  private async write<T>(scope: WriteScope, fn: (q: PgQueries) => Promise<T>): Promise<T> {
    await this.migrate();
    return pgWriteTransaction(
      await this.pool,
      async (client: PoolClient) => {
        const q = new PgQueries(client, this.now, this.tokenCounter);
        const key = ("turn" in scope ? this.openTurns.get(scope.turn) : undefined) ?? (await scopeSession(q, scope));
        if (key !== undefined) await lockSession(client, key);
        return fn(q);
      },
      this.retry,
      (attempt, delayMs) => this.log.debug("store transaction lost a race, retrying", { attempt, delayMs }),
    );
  }

  private async read<T>(fn: (q: PgQueries) => Promise<T>): Promise<T> {
    await this.migrate();
    return pgReadTransaction(await this.pool, (client: PoolClient) => fn(new PgQueries(client, this.now, this.tokenCounter)));
  }
}

/** Takes nanobot's own `schema` parameter off the URL (the driver would pass it to the server). */
function splitSchema(url: string): { url: string; schema?: string } {
  const match = /[?&]schema=([^&#]*)/.exec(url);
  if (!match) return { url };
  const rest = url.replace(/([?&])schema=[^&#]*&?/, "$1").replace(/[?&]$/, "");
  return { url: rest, schema: decodeURIComponent(match[1]!) };
}

type WriteScope = { session: string } | { turn: string } | { thread: string };

async function scopeSession(q: PgQueries, scope: WriteScope): Promise<string | undefined> {
  if ("session" in scope) return scope.session;
  if ("turn" in scope) return (await q.one<{ k: string }>("SELECT session_key AS k FROM turns WHERE id = $1", [scope.turn]))?.k;
  return (await q.one<{ k: string }>("SELECT session_key AS k FROM threads WHERE id = $1", [scope.thread]))?.k;
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
