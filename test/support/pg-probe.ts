/**
 * Whether a PostgreSQL server answers, as one line for a skip or a log: shared by the tests'
 * requirement (postgres.ts) and the benches (bench/support/postgres.ts). No test runner here.
 */
import pg from "pg";

/** Why `url` cannot be used (its password hidden), or undefined when it answers a query. */
export async function postgresUnreachable(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("SELECT 1");
    return undefined;
  } catch (error) {
    return `${url.replace(/:[^:@/]*@/, ":***@")} unreachable: ${(error as Error).message}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}
