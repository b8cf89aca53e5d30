/**
 * The benches' PostgreSQL: the local server by default (`NANOBOT_BENCH_PG_URL`, an admin URL on
 * a database that exists, e.g. `postgres`), and a throwaway database per measured process.
 */
import pg from "pg";
import { postgresUnreachable } from "../../test/support/pg-probe.js";

export const BENCH_PG_URL = process.env["NANOBOT_BENCH_PG_URL"] ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** Why the bench's PostgreSQL cannot be used (one line), or undefined when it can. */
export async function postgresUnavailable(): Promise<string | undefined> {
  const why = await postgresUnreachable(BENCH_PG_URL);
  return why && `${why}; set NANOBOT_BENCH_PG_URL or start PostgreSQL`;
}

/** A throwaway database on the bench's PostgreSQL; dropped by the returned function. */
export async function scratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `nanobot_bench_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: BENCH_PG_URL, connectionTimeoutMillis: 3000 });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(BENCH_PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const again = new pg.Client({ connectionString: BENCH_PG_URL });
      await again.connect();
      try {
        await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await again.end();
      }
    },
  };
}
