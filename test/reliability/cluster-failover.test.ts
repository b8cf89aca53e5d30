/**
 * Issue #24, the "must show": three `nanobot gateway` workers (the built CLI) on one PostgreSQL
 * serve S sessions × T turns while one of them is SIGKILLed in the middle. The clients behave
 * like real ones: one session each, turns in order, every request with an Idempotency-Key, and
 * a request that failed because its worker died goes again, same key, to another worker.
 * Afterwards the store holds every user message once, in order per session, each answered
 * exactly once, and no turn is left open. One worker exports OTLP traces to a collector
 * stand-in: a traced turn shows its model and tool spans.
 *
 * Scale: NANOBOT_FAILOVER_SESSIONS × NANOBOT_FAILOVER_TURNS, default 60 × 10 (12–30 s
 * here). The 200 × 20 took 70 s at load ~4 but 6 minutes at load ~17 on the shared 2-core machine, too long
 * for every CI run: `npm run bench -- --only=cluster-failover` runs it and reports its figures
 * (bench/README.md); `NANOBOT_FAILOVER_SESSIONS=200 NANOBOT_FAILOVER_TURNS=20` runs it here.
 */
import { afterEach, expect, it } from "vitest";
import { Cluster, runClients } from "./cluster/harness.js";
import { startCollector, traceOf } from "../support/otlp-collector.js";
import type { OtlpCollector as Collector } from "../support/otlp-collector.js";
import { checkStore } from "./cluster/store-check.js";
import { needsPostgres } from "../support/postgres.js";

const postgres = await needsPostgres();

const SESSIONS = Number(process.env["NANOBOT_FAILOVER_SESSIONS"] ?? 60);
const TURNS = Number(process.env["NANOBOT_FAILOVER_TURNS"] ?? 10);

let cluster: Cluster | undefined;
let collector: Collector | undefined;
afterEach(async () => {
  await cluster?.stop();
  await collector?.close();
  cluster = collector = undefined;
});

postgres.describe("fail-over: three workers on one PostgreSQL, one SIGKILLed mid-run", () => {
  it(`${SESSIONS} sessions × ${TURNS} turns: 0 lost, 0 duplicated, order kept, every turn closed; a traced turn shows model and tool spans`, { timeout: 900_000 }, async () => {
    collector = await startCollector();
    const otlp = collector.url;
    // Three workers × (6 lease + 10 pool + 2) connections: well under the server's 100 (shared with other tests).
    cluster = await Cluster.start({
      workers: 3,
      maxLeaseConnections: 6,
      llmDelayMs: 20,
      envOf: (i): Record<string, string> => (i === 0 ? { OTEL_EXPORTER_OTLP_ENDPOINT: otlp, OTEL_SERVICE_NAME: "nanobot-failover", OTEL_BSP_SCHEDULE_DELAY: "200" } : {}),
    });
    const c = cluster;

    // One traced turn with a tool call, on the exporting worker.
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const traced = await fetch(`${c.workers[0]!.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "what does the note say? [read note.txt]" }], session_id: "traced" }),
    });
    expect(traced.status).toBe(200);

    let killedAt = 0;
    const total = SESSIONS * TURNS;
    const figures = await runClients(c, {
      prefix: "fo",
      sessions: SESSIONS,
      turns: TURNS,
      onAnswered: (answered) => {
        if (!killedAt && answered >= total / 2) {
          killedAt = answered;
          c.kill(2);
        }
      },
    });
    const stored = await checkStore(c.schema, "fo", SESSIONS, TURNS);
    console.log(
      `fail-over: ${SESSIONS} sessions × ${TURNS} turns on 3 workers, worker c SIGKILLed after ${killedAt} answers; ` +
        `${figures.answered} answered in ${(figures.wallMs / 1000).toFixed(1)} s, ${figures.retried} turns retried (${figures.failedAttempts} failed requests: ${JSON.stringify(figures.reasons)}); ` +
        `store: ${stored.lost} lost, ${stored.duplicated} duplicated, ${stored.reordered} out of order, ${stored.unanswered} unanswered, ${stored.answeredTwice} answered twice, ${stored.openTurns} open turns`,
    );
    expect(killedAt).toBeGreaterThan(0);
    expect(figures.unanswered, c.stderr()).toEqual([]);
    expect(stored.problems).toEqual([]);
    expect(stored).toMatchObject({ lost: 0, duplicated: 0, reordered: 0, unanswered: 0, answeredTwice: 0, openTurns: 0 });
    // The kill landed mid-run: some turns needed a second request.
    expect(figures.retried).toBeGreaterThan(0);

    // The traced turn's spans reached the collector: the turn, its two model calls, its tool call.
    const spans = await collector.waitFor((all) => traceOf(all, traceId).some((s) => s.name === "invoke_agent nanobot"));
    const trace = traceOf(spans, traceId);
    const turn = trace.find((s) => s.name === "invoke_agent nanobot")!;
    const models = trace.filter((s) => s.name === "chat test-model");
    const tools = trace.filter((s) => s.name === "execute_tool read_file");
    expect(models).toHaveLength(2);
    expect(tools).toHaveLength(1);
    for (const span of [...models, ...tools]) expect(span.parentSpanId).toBe(turn.spanId);
    expect(turn.parentSpanId).toBe("00f067aa0ba902b7");
  });
});
