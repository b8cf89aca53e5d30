/**
 * Opening the state database and running transactions safely when several processes share it:
 * WAL (readers never block the writer), a busy timeout inside SQLite, and on top of it a retry
 * with backoff for write transactions that still hit `SQLITE_BUSY`.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { migrate } from "./schema.js";

export interface OpenDatabaseOptions {
  /** Milliseconds SQLite itself waits for a lock before reporting `SQLITE_BUSY` (default 5000). */
  busyTimeoutMs?: number;
  readonly?: boolean;
}

export function openDatabase(path: string, options: OpenDatabaseOptions = {}): Database.Database {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { readonly: options.readonly ?? false });
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5000))}`);
  if (!options.readonly) {
    db.pragma("journal_mode = WAL");
    // NORMAL is durable across process crashes in WAL mode; only an OS crash can lose the last commit.
    db.pragma("synchronous = NORMAL");
  }
  db.pragma("foreign_keys = ON");
  if (!options.readonly) migrateWithRetry(db);
  return db;
}

/** Opening is synchronous, so a busy database is waited for with a blocking sleep. */
function migrateWithRetry(db: Database.Database): void {
  for (let attempt = 0; ; attempt++) {
    try {
      migrate(db);
      return;
    } catch (error) {
      if (!isBusyError(error) || attempt >= 12) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.min(1000, 20 * 2 ** attempt));
    }
  }
}

export function isBusyError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}

export interface RetryPolicy {
  /** Attempts after the first (default 8). */
  retries: number;
  /** First backoff in ms, doubled each attempt with jitter, capped at `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Injected so tests can run retry schedules without waiting. */
  sleep: (ms: number) => Promise<void>;
  random: () => number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  retries: 8,
  baseDelayMs: 20,
  maxDelayMs: 1000,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  random: Math.random,
};

export function backoffDelay(attempt: number, policy: RetryPolicy): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.round(exp / 2 + (exp / 2) * policy.random());
}

/**
 * Runs `fn` in a `BEGIN IMMEDIATE` transaction (the write lock is taken up front, so two
 * writers never deadlock upgrading read locks), retrying the whole transaction on busy;
 * `afterCommit` runs once it committed.
 */
export async function writeTransaction<T>(
  db: Database.Database,
  fn: () => T,
  policy: RetryPolicy = DEFAULT_RETRY,
  onRetry?: (attempt: number, delayMs: number) => void,
  afterCommit?: () => void,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      const result = runTransaction(db, "immediate", fn);
      afterCommit?.();
      return result;
    } catch (error) {
      if (!isBusyError(error) || attempt >= policy.retries) throw error;
      const delay = backoffDelay(attempt, policy);
      onRetry?.(attempt + 1, delay);
      await policy.sleep(delay);
    }
  }
}

/** A consistent multi-statement read (one snapshot), retried on busy like writes. */
export async function readTransaction<T>(db: Database.Database, fn: () => T, policy: RetryPolicy = DEFAULT_RETRY): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return runTransaction(db, "deferred", fn);
    } catch (error) {
      if (!isBusyError(error) || attempt >= policy.retries) throw error;
      await policy.sleep(backoffDelay(attempt, policy));
    }
  }
}

interface TransactionStatements {
  deferred: Database.Statement;
  immediate: Database.Statement;
  commit: Database.Statement;
  rollback: Database.Statement;
}

const transactionStatements = new WeakMap<Database.Database, TransactionStatements>();

/**
 * `fn` between BEGIN and COMMIT (ROLLBACK when it throws), with the four statements prepared once
 * per connection: `db.transaction(fn)` builds a new wrapper (five functions) on every call, and
 * every turn runs several transactions. A call inside a running transaction goes through
 * better-sqlite3's wrapper, which nests it as a savepoint.
 */
function runTransaction<T>(db: Database.Database, mode: "deferred" | "immediate", fn: () => T): T {
  if (db.inTransaction) {
    try {
      return db.transaction(fn)[mode]();
    } catch (error) {
      rolledBack(db);
      throw error;
    }
  }
  let statements = transactionStatements.get(db);
  if (!statements) {
    statements = {
      deferred: db.prepare("BEGIN DEFERRED"),
      immediate: db.prepare("BEGIN IMMEDIATE"),
      commit: db.prepare("COMMIT"),
      rollback: db.prepare("ROLLBACK"),
    };
    transactionStatements.set(db, statements);
  }
  statements[mode].run();
  try {
    const result = fn();
    statements.commit.run();
    return result;
  } catch (error) {
    if (db.inTransaction) statements.rollback.run();
    rolledBack(db);
    throw error;
  }
}

const rollbackListeners = new WeakMap<Database.Database, (() => void)[]>();

/**
 * Calls `listener` whenever a transaction (or a nested savepoint) on `db` that `writeTransaction`
 * or `readTransaction` ran is rolled back: for caches that follow this connection's changes as
 * they are made (ThreadPlaces), which must then forget them.
 */
export function onRollback(db: Database.Database, listener: () => void): void {
  const listeners = rollbackListeners.get(db);
  if (listeners) listeners.push(listener);
  else rollbackListeners.set(db, [listener]);
}

function rolledBack(db: Database.Database): void {
  for (const listener of rollbackListeners.get(db) ?? []) listener();
}
