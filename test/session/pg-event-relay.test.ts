/**
 * The cluster relay on a real PostgreSQL (LISTEN/NOTIFY): events reach the other workers of the
 * same store and not the sender, events bigger than a NOTIFY payload arrive whole, another
 * store's workers hear nothing, and a relay whose connection is killed reconnects, says so, and
 * delivers the events sent after it.
 */
import pg from "pg";
import { afterEach, beforeEach, expect } from "vitest";
import { PgEventRelay, relayApplicationName } from "../../src/session/pg-event-relay.js";
import { TEST_PG_URL, needsPostgres, uniqueSchema } from "../support/postgres.js";

const postgres = await needsPostgres();

let namespace: string;
const relays: PgEventRelay[] = [];
beforeEach(() => {
  namespace = uniqueSchema("relay");
});
afterEach(async () => {
  for (const r of relays.splice(0)) await r.close();
});

async function relay(options: Partial<ConstructorParameters<typeof PgEventRelay>[0]> = {}): Promise<PgEventRelay> {
  const r = new PgEventRelay({ url: TEST_PG_URL, namespace, retryDelaysMs: [50], ...options });
  relays.push(r);
  await r.start();
  return r;
}

function collect(r: PgEventRelay, topic: string): Array<{ data: unknown; from: string }> {
  const got: Array<{ data: unknown; from: string }> = [];
  r.subscribe(topic, (data, from) => got.push({ data, from }));
  return got;
}

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

postgres.describe("PostgreSQL cluster relay", () => {
  postgres.it("delivers an event to the other workers, not back to its sender, in order", async () => {
    const [a, b, c] = [await relay(), await relay(), await relay()];
    const [atA, atB, atC] = [collect(a, "turn"), collect(b, "turn"), collect(c, "turn")];
    for (let i = 0; i < 5; i++) a.publish("turn", { n: i });
    await until(() => atB.length === 5 && atC.length === 5, "the events on B and C");
    expect(atB.map((e) => e.data)).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    expect(atB.every((e) => e.from === a.workerId)).toBe(true);
    // Give A's own notifications time to come back, had they not been filtered.
    b.publish("turn", { n: "marker" });
    await until(() => atC.length === 6, "B's marker on C");
    await until(() => atA.length === 1, "B's marker on A");
    expect(atA.map((e) => e.data)).toEqual([{ n: "marker" }]);
  });

  postgres.it("carries an event far beyond the 8000-byte NOTIFY limit whole", async () => {
    const [a, b] = [await relay(), await relay()];
    const got = collect(b, "channel");
    const big = { content: "héllo wörld € 😀 ".repeat(3_000) };
    expect(Buffer.byteLength(JSON.stringify(big))).toBeGreaterThan(50_000);
    a.publish("channel", big);
    a.publish("channel", { after: true });
    await until(() => got.length === 2, "both events");
    expect(got[0]!.data).toEqual(big);
    expect(got[1]!.data).toEqual({ after: true });
  });

  postgres.it("drops an event over maxEventBytes instead of sending it", async () => {
    const [a, b] = [await relay({ maxEventBytes: 1_000 }), await relay()];
    const got = collect(b, "turn");
    a.publish("turn", { big: "x".repeat(2_000) });
    a.publish("turn", { small: true });
    await until(() => got.length === 1, "the small event");
    expect(got[0]!.data).toEqual({ small: true });
  });

  postgres.it("keeps stores apart: a relay of another schema hears nothing", async () => {
    const [a, b] = [await relay(), await relay()];
    const otherNamespace = uniqueSchema("other");
    const other = await relay({ namespace: otherNamespace });
    const witness = await relay({ namespace: otherNamespace });
    const [atB, atOther, atWitness] = [collect(b, "turn"), collect(other, "turn"), collect(witness, "turn")];
    other.publish("turn", { n: "other store" });
    await until(() => atWitness.length === 1, "the other store's event on its own worker");
    a.publish("turn", { n: "this store" });
    await until(() => atB.length === 1, "this store's event on B");
    expect(atB.map((e) => e.data)).toEqual([{ n: "this store" }]);
    expect(atWitness.map((e) => e.data)).toEqual([{ n: "other store" }]);
    expect(atOther).toEqual([]);
  });

  postgres.it("reconnects after its connection is killed, says so, and delivers later events", async () => {
    const [a, b] = [await relay(), await relay()];
    const got = collect(b, "turn");
    let resyncs = 0;
    b.onResync(() => resyncs++);
    const before = await sql<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [relayApplicationName(namespace)]);
    expect(before).toHaveLength(2);
    // Kill both workers' relay connections, as an operator or a failover would.
    await sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ANY($1)", [before.map((r) => r.pid)]);
    await until(() => !a.connected || !b.connected, "the cut to be noticed");
    await until(() => a.connected && b.connected, "both relays back");
    expect(resyncs).toBe(1);
    a.publish("turn", { after: "reconnect" });
    await until(() => got.length === 1, "the event sent after the reconnect");
    expect(got[0]!.data).toEqual({ after: "reconnect" });
  });
});
