/**
 * The SQLite schema, as an ordered list of migrations. A database records the last migration
 * it ran in `schema_version`; opening it runs the rest in one transaction. Migrations are
 * append-only: never edit a shipped one (the golden fixtures in test/session/fixtures would
 * catch it), add a new one instead.
 */
import type Database from "better-sqlite3";
import { SessionStoreError } from "./types.js";

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "sessions, threads, messages, turns, checkpoints",
    sql: `
      CREATE TABLE sessions (
        key TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        current_thread_id TEXT
      );
      CREATE TABLE threads (
        id TEXT PRIMARY KEY,
        session_key TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
        name TEXT,
        status TEXT NOT NULL CHECK (status IN ('active', 'archived')),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        replay_seq INTEGER NOT NULL DEFAULT 0,
        summary_seq INTEGER
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
        created_at INTEGER NOT NULL,
        turn_id TEXT,
        flags TEXT,
        attrs TEXT
      );
      CREATE UNIQUE INDEX messages_thread_seq ON messages(thread_id, seq);
      CREATE TABLE turns (
        id TEXT PRIMARY KEY,
        session_key TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
        thread_id TEXT NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
        status TEXT NOT NULL CHECK (status IN ('pending', 'completed', 'failed', 'stopped')),
        stop_reason TEXT,
        user_message_id TEXT NOT NULL,
        start_seq INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        ended_at INTEGER,
        timings TEXT,
        usage TEXT,
        error TEXT
      );
      CREATE TABLE checkpoints (
        turn_id TEXT PRIMARY KEY REFERENCES turns(id) ON DELETE CASCADE,
        phase TEXT NOT NULL,
        iteration INTEGER NOT NULL,
        pending_tool_calls TEXT NOT NULL DEFAULT '[]',
        count INTEGER NOT NULL DEFAULT 1,
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 2,
    description: "indexes for turn rollback and dangling-turn lookup",
    sql: `
      CREATE INDEX messages_turn ON messages(turn_id) WHERE turn_id IS NOT NULL;
      CREATE INDEX turns_pending ON turns(session_key) WHERE status = 'pending';
    `,
  },
  {
    version: 3,
    description: "thread titles (from the first user message)",
    sql: `
      ALTER TABLE threads ADD COLUMN title TEXT;
    `,
  },
  {
    version: 4,
    description: "exact token counts stored with messages (null on older rows)",
    sql: `
      ALTER TABLE messages ADD COLUMN tokens INTEGER;
      ALTER TABLE messages ADD COLUMN token_basis TEXT;
    `,
  },
  {
    version: 5,
    description: "no index on messages(turn_id): a turn's rows are found by thread and seq",
    sql: `
      DROP INDEX messages_turn;
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** Runs every migration newer than the database's version; returns the versions applied. */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS): number[] {
  // Fast path without a write lock: an up-to-date database is the common case, and another
  // process may be writing right now.
  const latestVersion = migrations[migrations.length - 1]?.version ?? 0;
  const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'").get();
  if (hasTable && schemaVersion(db) === latestVersion) return [];
  const run = db.transaction(() => {
    // Inside the write transaction: two processes opening a new file must not both migrate.
    db.exec(`CREATE TABLE IF NOT EXISTS schema_version (
      version INTEGER PRIMARY KEY,
      applied_at INTEGER NOT NULL,
      description TEXT NOT NULL
    )`);
    const row = db.prepare("SELECT MAX(version) AS v FROM schema_version").get() as { v: number | null };
    const current = row.v ?? 0;
    const latest = migrations[migrations.length - 1]?.version ?? 0;
    if (current > latest) {
      throw new SessionStoreError(
        `state database schema v${current} is newer than this nanobot understands (v${latest}); upgrade nanobot`,
      );
    }
    const applied: number[] = [];
    const record = db.prepare("INSERT INTO schema_version (version, applied_at, description) VALUES (?, ?, ?)");
    for (const m of migrations) {
      if (m.version <= current) continue;
      db.exec(m.sql);
      record.run(m.version, Date.now(), m.description);
      applied.push(m.version);
    }
    return applied;
  });
  return run.immediate();
}

export function schemaVersion(db: Database.Database): number {
  const row = db.prepare("SELECT MAX(version) AS v FROM schema_version").get() as { v: number | null };
  return row.v ?? 0;
}
