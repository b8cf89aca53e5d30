/**
 * nanobot side by side with the TypeScript peers (issue 11): loop overhead, parallel tools,
 * concurrency and cold start, against one fake LLM in its own process. Each (contender, run) is
 * its own worker process; runs are interleaved contender by contender (A B C … A B C …) and the
 * nanobot/peer ratio is taken per run so drift of the shared machine cancels.
 */
import { existsSync } from "node:fs";
import type { WorkerJob, WorkerResult } from "./contenders/worker.js";
import { PEERS_DIR, STORED_CONTENDERS } from "./contenders/types.js";
import type { HistoryPlace } from "./contenders/types.js";
import { measureColdStarts } from "./cold-start.js";
import type { ColdStartResult } from "./cold-start.js";
import { REPO_DIR, runToExit, startFakeLLMProcess } from "./support/processes.js";
import type { FakeLLM } from "./support/processes.js";
import { plainWorker } from "./support/plain-worker.js";
import { runWorkerProcess } from "./support/worker-process.js";
import { fmtSpread, pairedRatio, spread, table } from "./support/stats.js";
import type { Spread } from "./support/stats.js";

/** nanobot as a library, nanobot as a product, then the peers. */
export const CONTENDERS = ["nanobot", "nanobot-loop", "openai-agents", "ai-sdk", "jcheese-nanobot"] as const;
export type ContenderName = (typeof CONTENDERS)[number];
/** Which nanobot figure each peer is compared with: the port is a product, the others libraries. */
export const COUNTERPART: Record<string, ContenderName> = { "openai-agents": "nanobot", "ai-sdk": "nanobot", "jcheese-nanobot": "nanobot-loop" };
export const PEERS = ["openai-agents", "ai-sdk", "jcheese-nanobot"] as const;

export interface PeersBenchOptions {
  runs: number;
  /** [history size, measured runs per worker] for the loop workload. */
  loopSizes: [number, number][];
  loopWarmup: number;
  parallelTurns: number;
  sessions: number;
  turns: number;
  coldRuns: number;
}

export const FULL: PeersBenchOptions = { runs: 5, loopSizes: [[0, 200], [100, 100], [1_000, 20]], loopWarmup: 20, parallelTurns: 3, sessions: 50, turns: 10, coldRuns: 5 };
export const QUICK: PeersBenchOptions = { runs: 1, loopSizes: [[0, 50], [1_000, 5]], loopWarmup: 5, parallelTurns: 1, sessions: 50, turns: 4, coldRuns: 1 };

export interface FigureRow {
  contender: string;
  /** Each run's value, in run order (for the paired ratios). */
  values: number[];
  summary: Spread;
  extra?: Record<string, number>;
}

export interface Figure {
  name: string;
  unit: string;
  /** Whether lower is better (ratios < 1 favour nanobot). */
  lowerIsBetter: boolean;
  rows: FigureRow[];
  ratios: { peer: string; against: string; ratio: Spread }[];
}

export interface PeersBenchResult {
  options: PeersBenchOptions;
  figures: Figure[];
  coldStart: ColdStartResult;
  errors: string[];
}

/** `npm ci --prefix bench/peers` when its node_modules is missing. */
export async function ensurePeers(log: (line: string) => void): Promise<void> {
  if (existsSync(`${PEERS_DIR}node_modules`)) return;
  log("installing the peers (npm ci --prefix bench/peers) …");
  const out = await runToExit("npm", ["ci", "--prefix", PEERS_DIR, "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: REPO_DIR, timeoutMs: 600_000 });
  if (out.code !== 0) throw new Error(`npm ci in bench/peers failed:\n${out.stderr}`);
}

/**
 * Runs one job in a worker process of its own (plain JavaScript, see support/plain-worker.ts);
 * `worker`: another checkout's built worker (ab-process.ts), this tree's by default.
 */
export async function runWorker(job: WorkerJob, timeoutMs = 600_000, worker?: string): Promise<WorkerResult> {
  return (await runWorkerProcess(worker ?? (await plainWorker()), job, { timeoutMs })).result;
}

type Pick = (r: WorkerResult) => number;

interface Series {
  figure: string;
  unit: string;
  lowerIsBetter: boolean;
  pick: Pick;
  extra?: Record<string, Pick>;
}

/** Runs `make(contender)` for every run and contender, interleaved, into one figure per series. */
async function measure(
  fake: FakeLLM,
  delayMs: number,
  runs: number,
  make: (contender: string) => Omit<WorkerJob, "contender" | "baseURL">,
  series: Series[],
  errors: string[],
  log: (line: string) => void,
  only: readonly string[] = CONTENDERS,
): Promise<Figure[]> {
  const values = new Map<string, WorkerResult[]>();
  const failed = new Set<string>();
  const requests = new Map<string, number[]>();
  for (let run = 0; run < runs; run++) {
    for (const contender of CONTENDERS) {
      if (failed.has(contender) || !only.includes(contender)) continue;
      await fake.reset(delayMs);
      try {
        const result = await runWorker({ ...make(contender), contender, baseURL: fake.baseURL } as WorkerJob);
        values.set(contender, [...(values.get(contender) ?? []), result]);
        requests.set(contender, [...(requests.get(contender) ?? []), (await fake.stats()).requests]);
      } catch (err) {
        failed.add(contender);
        const line = err instanceof Error ? err.message.split("\n").slice(0, 3).join(" | ") : String(err);
        errors.push(line);
        log(`  ! ${line}`);
      }
    }
  }
  return series.map((s) => {
    const rows: FigureRow[] = CONTENDERS.filter((c) => values.has(c)).map((contender) => {
      const results = values.get(contender)!;
      const extra: Record<string, number> = { llmRequests: requests.get(contender)?.[0] ?? Number.NaN };
      for (const [k, pick] of Object.entries(s.extra ?? {})) extra[k] = spread(results.map(pick)).median;
      const vals = results.map(s.pick);
      return { contender, values: vals, summary: spread(vals), extra };
    });
    const byName = new Map(rows.map((r) => [r.contender, r.values]));
    const ratios = PEERS.filter((p) => byName.has(p) && byName.has(COUNTERPART[p]!)).map((peer) => ({
      peer,
      against: COUNTERPART[peer]!,
      ratio: pairedRatio(byName.get(COUNTERPART[peer]!)!, byName.get(peer)!),
    }));
    return { name: s.figure, unit: s.unit, lowerIsBetter: s.lowerIsBetter, rows, ratios };
  });
}

function placesFor(history: number, options: PeersBenchOptions): HistoryPlace[] {
  if (history === 0) return ["memory"];
  const longest = Math.max(...options.loopSizes.map(([h]) => h));
  return history === longest ? ["memory", "disk", "lived"] : ["memory", "disk"];
}

export async function runPeersBench(options: PeersBenchOptions, log: (line: string) => void = () => undefined): Promise<PeersBenchResult> {
  await ensurePeers(log);
  const fake = await startFakeLLMProcess(0);
  const errors: string[] = [];
  const figures: Figure[] = [];
  try {
    for (const [history, runs] of options.loopSizes) {
      // The history in memory (every contender), then, for the two products, only on disk, and
      // at the longest history the session's second turn (see HistoryPlace).
      for (const place of placesFor(history, options)) {
        const label = place === "memory" ? `${history} prior msgs` : place === "disk" ? `${history} prior msgs from disk` : `${history} prior msgs, 2nd turn`;
        log(`loop overhead, ${label}, ${runs} runs × ${options.runs} …`);
        figures.push(
          ...(await measure(
            fake,
            0,
            options.runs,
            () => ({ workload: "loop", history, runs, warmup: options.loopWarmup, place }),
            [
              { figure: `loop CPU per run, ${label}`, unit: "ms", lowerIsBetter: true, pick: (r) => (r.cpuUsPerRun ?? Number.NaN) / 1000 },
              { figure: `loop main-thread CPU per run, ${label}`, unit: "ms", lowerIsBetter: true, pick: (r) => (r.mainThreadCpuUsPerRun ?? Number.NaN) / 1000 },
              { figure: `loop wall per run, ${label}`, unit: "ms", lowerIsBetter: true, pick: (r) => r.wallMsPerRun ?? Number.NaN },
            ],
            errors,
            log,
            place === "memory" ? CONTENDERS : STORED_CONTENDERS,
          )),
        );
      }
    }
    log("parallel tools (4 × 200 ms) …");
    figures.push(
      ...(await measure(
        fake,
        0,
        options.runs,
        () => ({ workload: "parallel", runs: options.parallelTurns, warmup: 1 }),
        [{ figure: "parallel tools: turn wall (slowest tool 200 ms)", unit: "ms", lowerIsBetter: true, pick: (r) => Math.min(...(r.turnWallMs ?? [Number.NaN])) }],
        errors,
        log,
      )),
    );
    log(`concurrency (${options.sessions} sessions × ${options.turns} turns, 50 ms LLM) …`);
    figures.push(
      ...(await measure(
        fake,
        50,
        options.runs,
        () => ({ workload: "concurrency", sessions: options.sessions, turns: options.turns }),
        [
          { figure: `concurrency: total wall (ideal ${options.turns * 50} ms)`, unit: "ms", lowerIsBetter: true, pick: (r) => r.totalWallMs ?? Number.NaN },
          { figure: `concurrency: turns/s (ideal ${(options.sessions / 0.05).toFixed(0)})`, unit: "/s", lowerIsBetter: false, pick: (r) => r.turnsPerSecond ?? Number.NaN },
          { figure: "concurrency: CPU per turn", unit: "ms", lowerIsBetter: true, pick: (r) => r.cpuMsPerTurn ?? Number.NaN },
          { figure: "concurrency: peak RSS", unit: "MiB", lowerIsBetter: true, pick: (r) => r.peakRssMiB, extra: { baselineRssMiB: (r) => r.baselineRssMiB } },
        ],
        errors,
        log,
      )),
    );
    log("cold start …");
    const coldStart = await measureColdStarts(fake, options.coldRuns, errors);
    return { options, figures, coldStart, errors };
  } finally {
    await fake.close();
  }
}

export function formatPeersBench(result: PeersBenchResult): string {
  const out: string[] = [];
  const columns = CONTENDERS.filter((c) => result.figures.some((f) => f.rows.some((r) => r.contender === c)));
  const rows = result.figures.map((f) => [
    `${f.name} [${f.unit}]`,
    ...columns.map((c) => {
      const row = f.rows.find((r) => r.contender === c);
      return row ? fmtSpread(row.summary, f.unit === "ms" && row.summary.median >= 100 ? 0 : 1) : "—";
    }),
  ]);
  out.push("median (min–max) over runs; each run is its own process per contender", table(["figure", ...columns], rows), "");
  const ratioRows = result.figures.map((f) => [f.name, ...PEERS.map((p) => {
    const r = f.ratios.find((x) => x.peer === p);
    return r ? `${fmtSpread(r.ratio, 2)}` : "—";
  })]);
  out.push(
    "paired ratio nanobot/peer (nanobot vs openai-agents and ai-sdk; nanobot-loop vs jcheese-nanobot); < 1 = nanobot lower",
    table(["figure", ...PEERS], ratioRows),
    "",
  );
  out.push(formatColdStart(result.coldStart));
  if (result.errors.length > 0) out.push("", "errors:", ...result.errors.map((e) => `  ${e}`));
  return `${out.join("\n")}\n`;
}

function formatColdStart(cold: ColdStartResult): string {
  const rows = cold.rows.map((r) => [r.contender, fmtSpread(r.toFirstRequestMs, 0), fmtSpread(r.toExitMs, 0), r.command]);
  return ["cold start: process start → first LLM request, and → exit [ms]", table(["contender", "to first request", "to exit", "command"], rows)].join("\n");
}
