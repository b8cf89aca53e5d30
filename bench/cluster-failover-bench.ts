/**
 * `npm run bench -- --only=cluster-failover` (issue #24, the "must show" at full size): three
 * `nanobot gateway` workers on one PostgreSQL serve 200 sessions × 20 turns while one worker is
 * SIGKILLed halfway; clients retry failed requests with the same Idempotency-Key on another
 * worker. The same harness as test/reliability/cluster-failover.test.ts (which runs a smaller
 * default); here the figures are reported (bench/README.md), and the store checks' counts must all be 0.
 */
import { Cluster, runClients } from "../test/reliability/cluster/harness.js";
import { checkStore } from "../test/reliability/cluster/store-check.js";
import { percentile } from "./support/stats.js";

export interface FailoverBenchOptions {
  sessions: number;
  turns: number;
}

export const FAILOVER_FULL: FailoverBenchOptions = { sessions: 200, turns: 20 };
export const FAILOVER_QUICK: FailoverBenchOptions = { sessions: 30, turns: 4 };

export interface FailoverBenchResult {
  sessions: number;
  turns: number;
  killedAfter: number;
  answered: number;
  retriedTurns: number;
  failedRequests: number;
  unanswered: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  lost: number;
  duplicated: number;
  reordered: number;
  answeredTwice: number;
  openTurns: number;
  problems: string[];
}

export async function runFailoverBench(options: FailoverBenchOptions, log: (line: string) => void = () => undefined): Promise<FailoverBenchResult> {
  log(`cluster-failover: 3 workers, ${options.sessions} sessions × ${options.turns} turns, one worker SIGKILLed halfway …`);
  const cluster = await Cluster.start({ workers: 3, maxLeaseConnections: 6, llmDelayMs: 20 });
  try {
    const total = options.sessions * options.turns;
    let killedAfter = 0;
    const figures = await runClients(cluster, {
      prefix: "bench",
      sessions: options.sessions,
      turns: options.turns,
      onAnswered: (answered) => {
        if (!killedAfter && answered >= total / 2) {
          killedAfter = answered;
          cluster.kill(2);
        }
      },
    });
    const stored = await checkStore(cluster.schema, "bench", options.sessions, options.turns);
    return {
      sessions: options.sessions,
      turns: options.turns,
      killedAfter,
      answered: figures.answered,
      retriedTurns: figures.retried,
      failedRequests: figures.failedAttempts,
      unanswered: figures.unanswered.length,
      seconds: figures.wallMs / 1000,
      p50Ms: percentile(figures.latenciesMs, 50),
      p99Ms: percentile(figures.latenciesMs, 99),
      lost: stored.lost,
      duplicated: stored.duplicated,
      reordered: stored.reordered,
      answeredTwice: stored.answeredTwice,
      openTurns: stored.openTurns,
      problems: [...figures.unanswered.slice(0, 5), ...stored.problems.slice(0, 5)],
    };
  } finally {
    await cluster.stop();
  }
}

export function formatFailoverBench(r: FailoverBenchResult): string {
  return (
    `${r.sessions} sessions × ${r.turns} turns on 3 workers (one PostgreSQL), worker c SIGKILLed after ${r.killedAfter} answers\n` +
    `answered ${r.answered} of ${r.sessions * r.turns} in ${r.seconds.toFixed(1)} s (${(r.answered / r.seconds).toFixed(1)} turns/s), ` +
    `turn latency p50 ${r.p50Ms.toFixed(0)} ms, p99 ${r.p99Ms.toFixed(0)} ms (retries included; the fake model answers after 20 ms)\n` +
    `${r.retriedTurns} turns needed a retry (${r.failedRequests} failed requests), ${r.unanswered} never answered\n` +
    `store: ${r.lost} lost, ${r.duplicated} duplicated, ${r.reordered} out of order, ${r.answeredTwice} answered twice, ${r.openTurns} open turns\n` +
    (r.problems.length ? `problems:\n${r.problems.map((p) => `  ${p}`).join("\n")}\n` : "")
  );
}
