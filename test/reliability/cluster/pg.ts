/**
 * The test database and throwaway schemas for cluster runs, without vitest (the bench imports
 * the cluster harness too): the same URL and naming as test/support/postgres.ts.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

export const TEST_PG_URL = process.env["NANOBOT_TEST_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/test";

export function uniqueSchema(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(5).toString("hex")}`;
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
