/**
 * Leader election on PostgreSQL: of several workers (store instances) exactly one runs the
 * singletons; when the leader steps down or its connection dies, another worker takes over.
 */
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PgSessionStore } from "../../src/session/index.js";
import type { Leadership, Singletons } from "../../src/session/index.js";
import { TEST_PG_URL, needsPostgres, uniqueSchema } from "../support/postgres.js";

const postgres = await needsPostgres();

let schema: string;
const opened: PgSessionStore[] = [];
const campaigns: Leadership[] = [];
beforeEach(() => {
  schema = uniqueSchema("leader");
});
afterEach(async () => {
  for (const c of campaigns.splice(0)) await c.stop();
  for (const store of opened.splice(0)) await store.close();
});

/** A worker's singletons that record when they run; `running` counts workers running them now. */
const cluster = { running: 0, log: [] as string[] };
function worker(name: string): { leadership: Leadership; singletons: Singletons } {
  const store = new PgSessionStore({ url: TEST_PG_URL, schema, leaderRetryMs: 50 });
  opened.push(store);
  const leadership = store.leadership("gateway");
  campaigns.push(leadership);
  const singletons: Singletons = {
    start: async () => {
      cluster.running++;
      cluster.log.push(`${name} started (running: ${cluster.running})`);
    },
    stop: async () => {
      cluster.running--;
      cluster.log.push(`${name} stopped`);
    },
  };
  return { leadership, singletons };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
  if (!check()) throw new Error("condition never held");
}

postgres.describe("leader election", () => {
  beforeEach(() => {
    cluster.running = 0;
    cluster.log = [];
  });

  describe("one leader at a time", () => {
    it("elects the first worker; the others wait, and one takes over when it steps down", async () => {
      const a = worker("a");
      const b = worker("b");
      const c = worker("c");
      await a.leadership.start(a.singletons);
      await b.leadership.start(b.singletons);
      await c.leadership.start(c.singletons);
      expect([a.leadership.leading, b.leadership.leading, c.leadership.leading]).toEqual([true, false, false]);
      await a.leadership.stop();
      await until(() => b.leadership.leading || c.leadership.leading);
      expect(b.leadership.leading && c.leadership.leading).toBe(false);
      expect(cluster.log).toEqual(["a started (running: 1)", "a stopped", expect.stringMatching(/^[bc] started \(running: 1\)$/)]);
    });
  });

  describe("fail-over", () => {
    it("a leader whose connection dies steps down and another worker is elected", async () => {
      const a = worker("a");
      const b = worker("b");
      await a.leadership.start(a.singletons);
      await b.leadership.start(b.singletons);
      expect(a.leadership.leading).toBe(true);
      const client = new pg.Client({ connectionString: TEST_PG_URL });
      await client.connect();
      try {
        await client.query(
          `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted
             AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
          [`nanobot:leader:${schema}:gateway`],
        );
      } finally {
        await client.end();
      }
      await until(() => b.leadership.leading);
      await until(() => !a.leadership.leading && cluster.log.includes("a stopped"));
      expect(cluster.running).toBe(1);
      expect(cluster.log[0]).toBe("a started (running: 1)");
      expect(cluster.log).toContain("b started (running: 1)");
    });
  });
});
