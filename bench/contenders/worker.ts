/**
 * One contender, one workload, one process: `node bench/.worker/worker.js` (this file as plain
 * JavaScript, built by `support/plain-worker.ts`) with the job as JSON in `BENCH_JOB`, the result
 * sent over IPC. A process per (contender, run) keeps CPU time and peak RSS per contender, and
 * lets the harness interleave contenders run by run. Console output is silenced (one peer logs
 * every tool call), so no contender pays for a terminal.
 */
import { mkdtempSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Contender, CreateContender, HistoryPlace } from "./types.js";
import { EXPECTED_ANSWER, WINDOW_MARK, prepareLoopSessions } from "./types.js";
import { mainThreadCpuMs } from "../support/proc-cpu.js";

export type WorkerJob =
  | {
      contender: string;
      baseURL: string;
      workload: "loop";
      history: number;
      runs: number;
      warmup: number;
      place?: HistoryPlace;
      /** Sessions prepared (default: one per turn); more than the turns, so two jobs of different lengths prepare alike (ab-instructions.ts). */
      sessions?: number;
    }
  | { contender: string; baseURL: string; workload: "parallel"; runs: number; warmup: number }
  | { contender: string; baseURL: string; workload: "concurrency"; sessions: number; turns: number };

export interface WorkerResult {
  /** loop: process CPU time per run, µs. */
  cpuUsPerRun?: number;
  /**
   * loop: the main thread's share of it, µs (Linux, 10 ms ticks; NaN elsewhere). The rest ran on
   * V8's threads: optimizing compiles of code that became hot, and GC helpers.
   */
  mainThreadCpuUsPerRun?: number;
  /** loop: wall time per run, ms. */
  wallMsPerRun?: number;
  /** parallel: wall time of each measured turn, ms. */
  turnWallMs?: number[];
  /** concurrency: wall time of all sessions, ms, and completed turns per second. */
  totalWallMs?: number;
  turnsPerSecond?: number;
  /** concurrency: process CPU per turn, ms (less sensitive to a busy machine than the wall). */
  cpuMsPerTurn?: number;
  /** RSS after setup and warm-up, MiB. */
  baselineRssMiB: number;
  /** Peak RSS of the process (getrusage maxrss), MiB. */
  peakRssMiB: number;
}

function check(answer: string, contender: string): void {
  if (answer.trim() !== EXPECTED_ANSWER) throw new Error(`${contender} answered ${JSON.stringify(answer)} instead of the scripted answer`);
}

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

const rssMiB = () => process.memoryUsage().rss / 2 ** 20;

/** Marks the measured window on stdout for `profile-jit.ts` (V8's traces go there too); the peers bench ignores stdout. */
function markWindow(edge: "start" | "end"): void {
  if (process.env.BENCH_MARK_WINDOW === "1") writeSync(1, `${WINDOW_MARK} ${edge} ===\n`);
}

async function runJob(job: WorkerJob, c: Contender): Promise<Omit<WorkerResult, "peakRssMiB">> {
  if (job.workload === "loop") {
    await prepareLoopSessions(c, job.history, Math.max(job.sessions ?? 0, job.warmup + job.runs), job.place ?? "memory", (answer) => check(answer, job.contender));
    for (let i = 0; i < job.warmup; i++) check(await c.loopTurn(i), job.contender);
    const baselineRssMiB = rssMiB();
    markWindow("start");
    const cpu0 = cpuUs();
    const main0 = mainThreadCpuMs();
    const t0 = performance.now();
    for (let i = job.warmup; i < job.warmup + job.runs; i++) check(await c.loopTurn(i), job.contender);
    const wall = performance.now() - t0;
    markWindow("end");
    return {
      cpuUsPerRun: (cpuUs() - cpu0) / job.runs,
      mainThreadCpuUsPerRun: ((mainThreadCpuMs() - main0) * 1000) / job.runs,
      wallMsPerRun: wall / job.runs,
      baselineRssMiB,
    };
  }
  if (job.workload === "parallel") {
    for (let i = 0; i < job.warmup; i++) check(await c.parallelTurn(), job.contender);
    const baselineRssMiB = rssMiB();
    const turnWallMs: number[] = [];
    for (let i = 0; i < job.runs; i++) {
      const t0 = performance.now();
      check(await c.parallelTurn(), job.contender);
      turnWallMs.push(performance.now() - t0);
    }
    return { turnWallMs, baselineRssMiB };
  }
  check(await c.chatTurn("warmup", "hello"), job.contender);
  const baselineRssMiB = rssMiB();
  const cpu0 = cpuUs();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: job.sessions }, async (_, s) => {
      for (let t = 0; t < job.turns; t++) check(await c.chatTurn(`s${s}`, `Turn ${t} of session ${s}: hello.`), job.contender);
    }),
  );
  const totalWallMs = performance.now() - t0;
  const turns = job.sessions * job.turns;
  return { totalWallMs, turnsPerSecond: turns / (totalWallMs / 1000), cpuMsPerTurn: (cpuUs() - cpu0) / 1000 / turns, baselineRssMiB };
}

async function main(): Promise<void> {
  const job = JSON.parse(process.env.BENCH_JOB ?? "{}") as WorkerJob;
  for (const method of ["log", "info", "warn", "debug"] as const) console[method] = () => undefined;
  const workDir = mkdtempSync(join(tmpdir(), `nanobot-bench-${job.contender}-`));
  // Peers that keep state under the home directory (the nanobot port) write into the temp dir.
  process.env.HOME = workDir;
  try {
    // A plain string, not a template in the call: esbuild would bundle every match of a template.
    const file = `./${job.contender}.js`;
    const mod = (await import(file)) as { createContender: CreateContender };
    const contender = await mod.createContender({ baseURL: job.baseURL, workDir });
    const result = await runJob(job, contender);
    await contender.close?.();
    const peakRssMiB = process.resourceUsage().maxRSS / 1024;
    process.send?.({ ok: true, result: { ...result, peakRssMiB } });
  } catch (err) {
    process.send?.({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
process.disconnect?.();
