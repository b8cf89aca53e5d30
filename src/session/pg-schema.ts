/**
 * The PostgreSQL schema, as ordered migrations recorded in `nanobot_migrations`. The tables
 * mirror the SQLite schema (same names, same rows) so both stores share the row translation
 * and `nanobot store copy` moves rows as they are. Migrations are append-only, like SQLite's.
 */
import type pg from "pg";
import { SessionStoreError } from "./types.js";
import type { Migration } from "./schema.js";

export const PG_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "sessions, threads, messages, turns, checkpoints",
    sql: `
      CREATE TABLE sessions (
        key TEXT PRIMARY KEY,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        current_thread_id TEXT
      );
      CREATE TABLE threads (
        id TEXT PRIMARY KEY,
        session_key TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
        name TEXT,
        status TEXT NOT NULL CHECK (status IN ('active', 'archived')),
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        replay_seq INTEGER NOT NULL DEFAULT 0,
        summary_seq INTEGER,
        title TEXT
      );
      CREATE INDEX threads_session ON threads(session_key);
      CREATE UNIQUE INDEX threads_name ON threads(session_key, name) WHERE name IS NOT NULL;
      CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
        content TEXT NOT NULL,
        tool_calls TEXT,
        tool_call_id TEXT,
        tool_name TEXT,
        reasoning TEXT,
        usage TEXT,
        created_at BIGINT NOT NULL,
        turn_id TEXT,
        flags TEXT,
        attrs TEXT
      );
      CREATE UNIQUE INDEX messages_thread_seq ON messages(thread_id, seq);
      CREATE INDEX messages_turn ON messages(turn_id) WHERE turn_id IS NOT NULL;
      CREATE TABLE turns (
        id TEXT PRIMARY KEY,
        session_key TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
        thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'failed', 'stopped')),
        stop_reason TEXT,
        user_message_id TEXT NOT NULL,
        start_seq INTEGER NOT NULL,
        started_at BIGINT NOT NULL,
        ended_at BIGINT,
        timings TEXT,
        usage TEXT,
        error TEXT
      );
      CREATE INDEX turns_pending ON turns(session_key) WHERE status = 'pending';
      CREATE TABLE checkpoints (
        turn_id TEXT PRIMARY KEY REFERENCES turns(id) ON DELETE CASCADE,
        phase TEXT NOT NULL,
        iteration INTEGER NOT NULL,
        pending_tool_calls TEXT NOT NULL DEFAULT '[]',
        count INTEGER NOT NULL DEFAULT 1,
        updated_at BIGINT NOT NULL
      );
    `,
  },
  {
    version: 2,
    description: "exact token counts stored with messages (null on older rows)",
    sql: `
      ALTER TABLE messages ADD COLUMN tokens INTEGER;
      ALTER TABLE messages ADD COLUMN token_basis TEXT;
    `,
  },
  {
    version: 3,
    description: "platform deliveries seen by any worker (webhook retries answered once)",
    sql: `
      CREATE TABLE channel_deliveries (
        key TEXT PRIMARY KEY,
        seen_at BIGINT NOT NULL
      );
      CREATE INDEX channel_deliveries_seen ON channel_deliveries(seen_at);
    `,
  },
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;

/** Any constant works: it only has to be the same for every nanobot migrating this database. */
const MIGRATION_LOCK = 0x6e616e6f;

export interface PgMigrationResult {
  /** Versions applied now (empty when the database was up to date). */
  applied: number[];
  version: number;
}

/**
 * Runs the migrations newer than the database's version in one transaction. An advisory lock
 * makes processes that start together migrate one after the other; the second finds nothing to do.
 */
export async function migratePg(
  pool: pg.Pool,
  options: { schema?: string; migrations?: readonly Migration[] } = {},
): Promise<PgMigrationResult> {
  const migrations = options.migrations ?? PG_MIGRATIONS;
  const latest = migrations[migrations.length - 1]?.version ?? 0;
  const client = await pool.connect();
  let ok = false;
  // A checked-out client has no error listener of the pool's: a broken socket must not crash the process.
  const onError = (): void => undefined;
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    if (options.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS nanobot_migrations (
      version INTEGER PRIMARY KEY,
      applied_at BIGINT NOT NULL,
      description TEXT NOT NULL
    )`);
    const row = await client.query<{ v: number | null }>("SELECT MAX(version) AS v FROM nanobot_migrations");
    const current = row.rows[0]?.v ?? 0;
    if (current > latest) {
      throw new SessionStoreError(`PostgreSQL store schema v${current} is newer than this nanobot understands (v${latest}); upgrade nanobot`);
    }
    const applied: number[] = [];
    for (const m of migrations) {
      if (m.version <= current) continue;
      await client.query(m.sql);
      await client.query("INSERT INTO nanobot_migrations (version, applied_at, description) VALUES ($1, $2, $3)", [m.version, Date.now(), m.description]);
      applied.push(m.version);
    }
    await client.query("COMMIT");
    ok = true;
    return { applied, version: Math.max(current, latest) };
  } finally {
    if (!ok) await client.query("ROLLBACK").catch(() => undefined);
    client.removeListener("error", onError);
    client.release(!ok);
  }
}
