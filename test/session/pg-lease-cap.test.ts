/**
 * `store.maxLeaseConnections`: each running turn holds a dedicated connection for its session
 * lease, at most this many per worker. Past the cap a lease waits (never fails) for the next
 * connection a finished turn gives back, in the order the waits began; an abandoned wait leaves
 * its place; a connection that broke is replaced for the next waiter.
 */
import pg from "pg";
import { afterEach, beforeEach, expect, it } from "vitest";
import { PgSessionStore } from "../../src/session/index.js";
import type { SessionLease } from "../../src/session/index.js";
import { TEST_PG_URL, dropSchemas, needsPostgres, uniqueSchema } from "../support/postgres.js";

const postgres = await needsPostgres();

let schema: string;
const opened: PgSessionStore[] = [];
const worker = (maxLeaseConnections: number): PgSessionStore => {
  const store = new PgSessionStore({ url: TEST_PG_URL, schema, maxLeaseConnections });
  opened.push(store);
  return store;
};
beforeEach(() => {
  schema = uniqueSchema("leasecap");
});
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  await dropSchemas([schema]);
});

/** Server backends holding a lease lock of this test's schema. */
async function leaseHolders(): Promise<number> {
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    const keys = Array.from({ length: 8 }, (_, i) => `nanobot:lease:${schema}:api:s${i}`);
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(DISTINCT pid)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted
         AND ((classid::bigint << 32) | objid::bigint) IN (SELECT hashtextextended(k, 0) FROM unnest($1::text[]) AS k)`,
      [keys],
    );
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("condition never held");
}

postgres.describe("a cap on lease connections", () => {
  it("past the cap, leases wait for a connection and get one in the order they asked", async () => {
    const store = worker(2);
    await store.migrate();
    const order: string[] = [];
    const held = [await store.leaseSession("api:s0"), await store.leaseSession("api:s1")];
    const waits = ["api:s2", "api:s3", "api:s4"].map((key) =>
      store.leaseSession(key).then((lease) => {
        order.push(key);
        return lease;
      }),
    );
    await until(() => store.leaseConnectionUse().queued === 3);
    expect(store.leaseConnectionUse()).toEqual({ inUse: 2, queued: 3 });
    expect(await leaseHolders()).toBe(2);

    await held[0]!.release();
    const s2 = await waits[0]!;
    expect(order).toEqual(["api:s2"]);
    // One connection back at a time: two at once are handed out in order, but each lease then
    // takes its lock on the server, and those two round trips may finish in either order.
    await held[1]!.release();
    const s3 = await waits[1]!;
    expect(order).toEqual(["api:s2", "api:s3"]);
    await s2.release();
    const s4 = await waits[2]!;
    expect(order).toEqual(["api:s2", "api:s3", "api:s4"]);
    expect(await leaseHolders()).toBe(2);
    for (const lease of [s3, s4]) await lease.release();
    expect(store.leaseConnectionUse()).toEqual({ inUse: 0, queued: 0 });
  });

  it("an abandoned wait at the cap gives up its place; the next waiter is served", async () => {
    const store = worker(1);
    await store.migrate();
    const first = await store.leaseSession("api:s0");
    const abort = new AbortController();
    const abandoned = store.leaseSession("api:s1", abort.signal).catch((error: unknown) => error);
    const next = store.leaseSession("api:s2");
    await until(() => store.leaseConnectionUse().queued === 2);
    abort.abort();
    expect(await abandoned).toMatchObject({ name: "AbortedError" });
    expect(store.leaseConnectionUse().queued).toBe(1);
    await first.release();
    await (await next).release();
    expect(store.leaseConnectionUse()).toEqual({ inUse: 0, queued: 0 });
  });

  it("a connection that broke under a lease is replaced for the next waiter", async () => {
    const store = worker(1);
    await store.migrate();
    const first: SessionLease = await store.leaseSession("api:s0");
    const next = store.leaseSession("api:s1");
    await until(() => store.leaseConnectionUse().queued === 1);
    // The server ends the holder's connection (as a network cut or a restart would).
    const admin = new pg.Client({ connectionString: TEST_PG_URL });
    await admin.connect();
    try {
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
        [`nanobot:lease:${schema}:api:s0`],
      );
    } finally {
      await admin.end();
    }
    await until(() => first.lost.aborted);
    await first.release();
    const second = await next;
    expect(second.lost.aborted).toBe(false);
    expect(await leaseHolders()).toBe(1);
    await second.release();
  });

  it("refuses a cap below one", () => {
    expect(() => worker(0)).toThrow(/maxLeaseConnections must be a positive integer/);
  });
});
