/**
 * Issue #24 part 5: the network between the workers and PostgreSQL fails mid-turn. Two
 * `nanobot gateway` workers (the built CLI) reach the database through a TCP proxy that resets
 * every connection at once while turns run (leases, pool connections, the leader's and the
 * workers' liveness locks) and refuses new ones for a while, then a second time without the
 * pause. The clients retry failed requests with the same Idempotency-Key. Afterwards no message
 * is lost or stored twice, every turn is closed, and both workers serve again without a
 * restart (one of them leads again).
 */
import pg from "pg";
import { afterEach, expect } from "vitest";
import { Cluster, runClients } from "./cluster/harness.js";
import { checkStore } from "./cluster/store-check.js";
import { startTcpProxy } from "./cluster/tcp-proxy.js";
import type { TcpProxy } from "./cluster/tcp-proxy.js";
import { TEST_PG_URL, needsPostgres } from "../support/postgres.js";
import { answerFor } from "./cluster/echo-llm.js";

const postgres = await needsPostgres();

const SESSIONS = 40;
const TURNS = 8;

let cluster: Cluster | undefined;
let proxy: TcpProxy | undefined;
afterEach(async () => {
  await cluster?.stop();
  await proxy?.close();
  cluster = proxy = undefined;
});

/** Whether some worker holds the cluster's leadership lock. */
async function leaderElected(schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND ((classid::bigint << 32) | objid::bigint) = hashtextextended($1, 0)`,
      [`nanobot:leader:${schema}:gateway`],
    );
    return rows[0]!.n > 0;
  } finally {
    await client.end();
  }
}

async function until(check: () => Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

postgres.it(`every connection to PostgreSQL dropped mid-turn, twice: ${SESSIONS} sessions × ${TURNS} turns, nothing lost or doubled, every turn closed, the workers serve on`, async () => {
  const target = new URL(TEST_PG_URL);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const viaProxy = new URL(TEST_PG_URL);
  viaProxy.host = proxy.address;
  cluster = await Cluster.start({ workers: 2, maxLeaseConnections: 6, llmDelayMs: 50, storeBaseUrl: viaProxy.toString() });
  const c = cluster;
  const p = proxy;
  await until(() => leaderElected(c.schema), "a leader");

  const total = SESSIONS * TURNS;
  const cuts: Array<{ at: number; dropped: number }> = [];
  const figures = await runClients(c, {
    prefix: "cut",
    sessions: SESSIONS,
    turns: TURNS,
    onAnswered: (answered) => {
      if (cuts.length === 0 && answered >= total / 3) cuts.push({ at: answered, dropped: (p.cut(3_000), 0) });
      else if (cuts.length === 1 && answered >= (2 * total) / 3) cuts.push({ at: answered, dropped: (p.cut(), 0) });
    },
  });
  const stored = await checkStore(c.schema, "cut", SESSIONS, TURNS);
  console.log(
    `network cut: ${SESSIONS} sessions × ${TURNS} turns on 2 workers, every PostgreSQL connection reset after ${cuts.map((x) => x.at).join(" and ")} answers (the first refusing for 3 s); ` +
      `${figures.answered} answered in ${(figures.wallMs / 1000).toFixed(1)} s, ${figures.retried} turns retried (${figures.failedAttempts} failed requests: ${JSON.stringify(figures.reasons)}); ` +
      `store: ${stored.lost} lost, ${stored.duplicated} duplicated, ${stored.unanswered} unanswered, ${stored.answeredTwice} answered twice, ${stored.openTurns} open turns`,
  );
  expect(c.alive().map((w) => w.name), c.stderr()).toEqual(["a", "b"]);
  expect(cuts).toHaveLength(2);
  expect(figures.unanswered, c.stderr()).toEqual([]);
  // What failed during the cut said so as a retryable 503 (store unreachable, turn interrupted), never a bare 500.
  expect(Object.keys(figures.reasons).filter((reason) => !reason.startsWith("HTTP 503") && !reason.startsWith("fetch failed"))).toEqual([]);
  expect(stored.problems).toEqual([]);
  expect(stored).toMatchObject({ lost: 0, duplicated: 0, reordered: 0, unanswered: 0, answeredTwice: 0, openTurns: 0 });

  // Both workers serve fresh sessions, and the cluster has a leader again, without a restart.
  for (const worker of c.workers) {
    const res = await fetch(`${worker.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: `after the cut on ${worker.name}` }], session_id: `after-${worker.name}` }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe(answerFor(`after the cut on ${worker.name}`));
  }
  await until(() => leaderElected(c.schema), "a leader after the cuts");
}, 600_000);
