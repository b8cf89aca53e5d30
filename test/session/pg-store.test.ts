/**
 * What only the PostgreSQL store has: its migrations table, migrating from several processes at
 * once, and writers on separate connections racing for the same session (SERIALIZABLE + retry).
 * Everything the two stores share runs in the shared suites (turn-lifecycle, threads, …).
 */
import pg from "pg";
import { afterEach, beforeEach, expect } from "vitest";
import { assistantMessage, userMessage } from "../../src/core/index.js";
import { PG_MIGRATIONS, PG_SCHEMA_VERSION, PgSessionStore, historyProblems } from "../../src/session/index.js";
import { TEST_PG_URL, dropSchemas, needsPostgres, uniqueSchema } from "../support/postgres.js";
import { runResult } from "./helpers/temp-store.js";

const postgres = await needsPostgres();

let schema: string;
const opened: PgSessionStore[] = [];
const open = (): PgSessionStore => {
  const store = new PgSessionStore({ url: TEST_PG_URL, schema });
  opened.push(store);
  return store;
};
beforeEach(() => {
  schema = uniqueSchema("pgstore");
});
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  await dropSchemas([schema]);
});

async function sql<R>(text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: TEST_PG_URL, options: `-c search_path=${schema}` });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as R[];
  } finally {
    await client.end();
  }
}

postgres.describe("PostgreSQL migrations", () => {
  postgres.it("records each applied migration once; a second run applies nothing", async () => {
    expect(await open().migrate()).toEqual({ applied: PG_MIGRATIONS.map((m) => m.version), version: PG_SCHEMA_VERSION });
    expect(await open().migrate()).toEqual({ applied: [], version: PG_SCHEMA_VERSION });
    const rows = await sql<{ version: number; description: string }>("SELECT version, description FROM nanobot_migrations ORDER BY version");
    expect(rows).toEqual(PG_MIGRATIONS.map((m) => ({ version: m.version, description: m.description })));
  });

  postgres.it("stores started together migrate once, one after the other", async () => {
    const results = await Promise.all([open(), open(), open()].map((s) => s.migrate()));
    expect(results.map((r) => r.applied.length).sort()).toEqual([0, 0, PG_MIGRATIONS.length]);
    expect(await sql("SELECT version FROM nanobot_migrations")).toHaveLength(PG_MIGRATIONS.length);
  });

  postgres.it("refuses a database migrated by a newer nanobot", async () => {
    await open().migrate();
    await sql("INSERT INTO nanobot_migrations (version, applied_at, description) VALUES (999, 0, 'from the future')");
    await expect(open().getSession("cli:direct")).rejects.toThrow(/schema v999 is newer than this nanobot understands/);
  });

  postgres.it("keeps timestamps as epoch-millisecond numbers", async () => {
    const store = open();
    const info = await store.ensureSession("cli:direct");
    expect(typeof info.createdAt).toBe("number");
    expect(Math.abs(info.createdAt - Date.now())).toBeLessThan(60_000);
  });
});

postgres.describe("writers on separate connections", () => {
  postgres.it("appends racing for one session all land, each once, in one gap-free order", async () => {
    const a = open();
    const b = open();
    await a.ensureSession("api:shared");
    const texts = Array.from({ length: 30 }, (_, i) => `note ${i}`);
    await Promise.all(texts.map((text, i) => (i % 2 ? a : b).appendMessages("api:shared", [assistantMessage(text)])));
    const stored = await a.loadMessages("api:shared");
    expect(stored.map((m) => (m.content[0] as { text: string }).text).sort()).toEqual([...texts].sort());
    const seqs = await sql<{ seq: number }>("SELECT seq FROM messages ORDER BY seq");
    expect(seqs.map((r) => r.seq)).toEqual(texts.map((_, i) => i + 1));
  });

  postgres.it("turns of many sessions from two stores at once leave every history legal", async () => {
    const stores = [open(), open()];
    const keys = Array.from({ length: 8 }, (_, i) => `telegram:${i}`);
    await Promise.all(
      keys.map(async (key, i) => {
        const store = stores[i % 2]!;
        for (let n = 0; n < 5; n++) {
          const turn = await store.beginTurn(key, userMessage(`q${n}`));
          await store.completeTurn(turn.turnId, runResult([assistantMessage(`a${n}`)]));
        }
      }),
    );
    for (const key of keys) {
      const history = await stores[0]!.loadHistory(key);
      expect(history).toHaveLength(10);
      expect(historyProblems(history)).toEqual([]);
    }
    expect(await sql("SELECT id FROM turns WHERE status <> 'completed'")).toEqual([]);
  });
});

postgres.describe("platform deliveries seen by any worker", () => {
  postgres.it("the first store to claim a delivery id wins; every other claim of it, from any store, loses", async () => {
    const [a, b] = [open(), open()];
    const claims = await Promise.all([a, b, a, b].map((s) => s.claimDelivery("slack:Ev1")));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await b.claimDelivery("slack:Ev2")).toBe(true);
    expect(await a.claimDelivery("slack:Ev2")).toBe(false);
    // Another channel's id space is its own.
    expect(await a.claimDelivery("work-slack:Ev1")).toBe(true);
  });

  postgres.it("ids older than a day are forgotten when the next claim prunes", async () => {
    let now = 1_000_000_000_000;
    const store = new PgSessionStore({ url: TEST_PG_URL, schema, now: () => now });
    opened.push(store);
    expect(await store.claimDelivery("slack:EvOld")).toBe(true);
    now += 25 * 60 * 60 * 1000;
    expect(await store.claimDelivery("slack:EvNew")).toBe(true);
    expect(await sql<{ key: string }>("SELECT key FROM channel_deliveries ORDER BY key")).toEqual([{ key: "slack:EvNew" }]);
  });
});
