/**
 * The PostgreSQL the tests use (`NANOBOT_TEST_PG_URL`, default the local server with trust
 * auth) and throwaway schemas on it, one per test store, so test files run in parallel.
 */
import pg from "pg";
import { randomBytes } from "node:crypto";
import { postgresUnreachable } from "./pg-probe.js";
import { requireService } from "./requires.js";
import type { Requirement } from "./requires.js";

export const TEST_PG_URL = process.env["NANOBOT_TEST_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";

let cached: Promise<Requirement> | undefined;

/** describe/it wrappers that skip (one line) without PostgreSQL, and fail under CI=true. */
export function needsPostgres(): Promise<Requirement> {
  cached ??= requireService("postgresql", {
    start: "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start (or set NANOBOT_TEST_PG_URL)",
    probe: () => postgresUnreachable(TEST_PG_URL),
  });
  return cached;
}

/** A fresh schema name no other test uses. */
export function uniqueSchema(prefix = "t"): string {
  return `${prefix}_${process.pid}_${randomBytes(5).toString("hex")}`;
}

export async function dropSchemas(schemas: readonly string[]): Promise<void> {
  if (!schemas.length) return;
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
