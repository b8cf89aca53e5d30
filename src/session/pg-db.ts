/**
 * Connections and transactions for the PostgreSQL store. A write transaction first takes its
 * session's lock (a transaction-scoped advisory lock on the session key): writers of one
 * session run one after the other, as SQLite's single writer runs them, while other sessions
 * write in parallel. Each statement then sees everything the previous holder committed (READ
 * COMMITTED). A deadlock or serialization failure runs the whole transaction again with backoff.
 */
import type pg from "pg";
import type { PoolClient, PoolConfig } from "pg";
import { DEFAULT_RETRY, backoffDelay } from "./sqlite-db.js";
import type { RetryPolicy } from "./sqlite-db.js";

/** The subset of a client the query layer needs (a pool client inside a transaction). */
export type Queryable = Pick<PoolClient, "query">;

const INT8 = 20;
const NUMERIC = 1700;

/**
 * Timestamps are epoch milliseconds in BIGINT columns: read them as numbers (they stay far
 * below 2^53), not the strings node-postgres gives by default. Set per pool, not globally.
 */
function typesOf(driver: typeof pg): PoolConfig["types"] {
  return {
    getTypeParser(oid: number, format?: "text" | "binary") {
      if (oid === INT8 || oid === NUMERIC) return (value: string) => Number(value);
      return driver.types.getTypeParser(oid, format);
    },
  } as PoolConfig["types"];
}

export interface PgPoolOptions {
  url: string;
  /** Tables live in this schema (created by the migrations); default `public`. */
  schema?: string;
  /** Connections at most (default 10). */
  max?: number;
}

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

export function validSchemaName(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(`invalid PostgreSQL schema name ${JSON.stringify(schema)} (lowercase letters, digits, _)`);
  }
  return schema;
}

/** The driver is loaded on first use: commands on a SQLite home never pay for it. */
export async function createPool(options: PgPoolOptions): Promise<pg.Pool> {
  const driver = (await import("pg")).default;
  const config: PoolConfig = {
    connectionString: options.url,
    max: options.max ?? 10,
    types: typesOf(driver),
    // A store that cannot reach its database says so within seconds instead of hanging a turn.
    connectionTimeoutMillis: 10_000,
  };
  if (options.schema) config.options = `-c search_path=${validSchemaName(options.schema)}`;
  const pool = new driver.Pool(config);
  // An idle connection the server dropped must not crash the process; the next query reconnects.
  pool.on("error", () => undefined);
  return pool;
}

/** serialization_failure, deadlock_detected: the transaction lost a race and may simply run again. */
export function isRetryableError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "40001" || code === "40P01";
}

/**
 * The connection to PostgreSQL failed (refused, reset, cut, the server went away), as opposed
 * to a statement the server refused: what a network cut or a database restart looks like.
 */
export function isConnectionError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && typeof e === "object" && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === "string" && (/^08/.test(code) || ["57P01", "57P02", "57P03", "53300", "ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT"].includes(code))) return true;
    if (typeof message === "string" && /Connection terminated|connection error|timeout exceeded when trying to connect|the lock connection to PostgreSQL broke|lost the session lease/i.test(message)) return true;
  }
  return false;
}

/** Waits for the session's write lock; it is released when the transaction ends. */
export async function lockSession(client: Queryable, sessionKey: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [`nanobot:session:${sessionKey}`]);
}

/** `fn` in one transaction on a pooled connection (it takes its lock first), run again when it loses a race. */
export async function pgWriteTransaction<T>(
  pool: pg.Pool,
  fn: (client: PoolClient) => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY,
  onRetry?: (attempt: number, delayMs: number) => void,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await inTransaction(pool, "BEGIN", fn);
    } catch (error) {
      if (!isRetryableError(error) || attempt >= policy.retries) throw error;
      const delay = backoffDelay(attempt, policy);
      onRetry?.(attempt + 1, delay);
      await policy.sleep(delay);
    }
  }
}

/** A consistent multi-statement read: one snapshot for every statement of `fn`. */
export function pgReadTransaction<T>(pool: pg.Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  return inTransaction(pool, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", fn);
}

async function inTransaction<T>(pool: pg.Pool, begin: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection whose state is unknown (an error outside `fn`, a failed rollback) is not reused.
  let broken = true;
  // The pool listens for errors on idle clients only: a checked-out client whose socket breaks
  // (a network cut) would otherwise crash the process. Its query fails with the error anyway.
  const onError = (): void => {
    broken = true;
  };
  client.on("error", onError);
  try {
    await client.query(begin);
    let result: T;
    try {
      result = await fn(client);
    } catch (error) {
      await client.query("ROLLBACK");
      broken = false;
      throw error;
    }
    await client.query("COMMIT");
    broken = false;
    return result;
  } finally {
    client.removeListener("error", onError);
    client.release(broken);
  }
}
