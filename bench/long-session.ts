/**
 * Where assistants slow down in real use (issue 25), for the product turn (`nanobot-loop`):
 * - **long session**: one session with 10,000 or 100,000 prior messages in the store; its first
 *   turn (which reads the newest `maxMessages` back; the seeded messages are short, so the
 *   token budget is not reached and nothing is summarised) and the steady turns after it (the
 *   3-round `bench-loop` script), process CPU per turn and peak RSS;
 * - **tool-heavy turn**: 30 tool rounds, each result 20 KB (`bench-heavy`), in a fresh session.
 * Each case runs in its own process (`--worker`, job in BENCH_JOB), so RSS is the case's own.
 * Both cases run on the SQLite store and, when the bench's PostgreSQL answers
 * (`NANOBOT_BENCH_PG_URL`, default the local server; support/postgres.ts), on the PostgreSQL
 * store too, in a throwaway database per process: every statement there is a round trip.
 *
 *   npx tsx bench/long-session.ts [--quick] [--runs=N]   (or `npm run bench -- --only=long-session`)
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CreateContender } from "./contenders/types.js";
import { EXPECTED_ANSWER } from "./contenders/types.js";
import { postgresUnavailable, scratchDatabase } from "./support/postgres.js";
import { BENCH_DIR, REPO_DIR, startFakeLLMProcess } from "./support/processes.js";
import { spread, table } from "./support/stats.js";
import type { Spread } from "./support/stats.js";

type Job = ({ kind: "long"; baseURL: string; history: number; turns: number } | { kind: "heavy"; baseURL: string; turns: number; warmup: number }) & {
  /** The PostgreSQL store instead of SQLite. */
  postgres?: boolean;
};

interface CaseResult {
  /** long: CPU and wall of the session's first turn (the seeded history read back). */
  firstCpuMs?: number;
  firstWallMs?: number;
  /** CPU and wall per turn of the measured turns. */
  cpuMsPerTurn: number;
  wallMsPerTurn: number;
  /** RSS once the store is seeded (before any turn), and the process's peak. */
  seededRssMiB: number;
  peakRssMiB: number;
}

export interface LongSessionOptions {
  runs: number;
  histories: number[];
  steadyTurns: number;
  heavyTurns: number;
  /** The same cases on the PostgreSQL store, when it answers. */
  postgres: boolean;
}

export const LONG_FULL: LongSessionOptions = { runs: 3, histories: [10_000, 100_000], steadyTurns: 20, heavyTurns: 5, postgres: true };
export const LONG_QUICK: LongSessionOptions = { runs: 1, histories: [10_000], steadyTurns: 5, heavyTurns: 2, postgres: false };

export interface LongSessionRow {
  case: string;
  firstCpuMs?: Spread;
  firstWallMs?: Spread;
  cpuMsPerTurn: Spread;
  wallMsPerTurn: Spread;
  seededRssMiB: Spread;
  peakRssMiB: Spread;
}

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const rssMiB = () => process.memoryUsage().rss / 2 ** 20;

async function runCase(job: Job): Promise<CaseResult> {
  for (const method of ["log", "info", "warn", "debug"] as const) console[method] = () => undefined;
  const workDir = mkdtempSync(join(tmpdir(), "nanobot-bench-long-"));
  process.env.HOME = workDir;
  const database = job.postgres ? await scratchDatabase() : undefined;
  try {
    const mod = (await import("./contenders/nanobot-loop.js")) as { createContender: CreateContender };
    const c = await mod.createContender({ baseURL: job.baseURL, workDir, ...(database ? { storeUrl: database.url } : {}) });
    const check = (answer: string) => {
      if (answer.trim() !== EXPECTED_ANSWER) throw new Error(`answered ${JSON.stringify(answer)}`);
    };
    const timed = async (fn: () => Promise<string>, count: number) => {
      const c0 = cpuMs();
      const t0 = performance.now();
      for (let i = 0; i < count; i++) check(await fn());
      return { cpu: (cpuMs() - c0) / count, wall: (performance.now() - t0) / count };
    };
    let result: CaseResult;
    if (job.kind === "long") {
      // A short session first, so loading code is not charged to the long one. The tokenizer is
      // not preloaded: the product loads it only when a prompt nears the window (since session
      // 12), so the seeded session's first turn pays for it when it does, as in real use.
      await c.prepareLoop(0, 1);
      check(await c.loopTurn(0));
      await c.prepareLoop(job.history, 1, "disk");
      global.gc?.();
      const seededRssMiB = rssMiB();
      const first = await timed(() => c.loopTurn(0), 1);
      const steady = await timed(() => c.loopTurn(0), job.turns);
      result = { firstCpuMs: first.cpu, firstWallMs: first.wall, cpuMsPerTurn: steady.cpu, wallMsPerTurn: steady.wall, seededRssMiB, peakRssMiB: 0 };
    } else {
      const heavy = c.heavyTurn!;
      let index = 0;
      await timed(() => heavy(index++), job.warmup);
      const seededRssMiB = rssMiB();
      const measured = await timed(() => heavy(index++), job.turns);
      result = { cpuMsPerTurn: measured.cpu, wallMsPerTurn: measured.wall, seededRssMiB, peakRssMiB: 0 };
    }
    await c.close?.();
    return { ...result, peakRssMiB: process.resourceUsage().maxRSS / 1024 };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
    await database?.drop();
  }
}

function runWorker(job: Job): Promise<CaseResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", `${BENCH_DIR}long-session.ts`, "--worker"], {
      cwd: REPO_DIR,
      env: { ...process.env, BENCH_JOB: JSON.stringify(job) },
      stdio: ["ignore", "ignore", "pipe", "ipc"],
    });
    let stderr = "";
    let settled = false;
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("message", (msg: { ok: boolean; result?: CaseResult; error?: string }) => {
      settled = true;
      if (msg.ok && msg.result) resolve(msg.result);
      else reject(new Error(`${job.kind}: ${msg.error ?? "failed"}`));
    });
    child.once("exit", (code) => {
      if (!settled) reject(new Error(`${job.kind}: worker exited with ${code}\n${stderr.slice(-2000)}`));
    });
  });
}

export async function runLongSessionBench(options: LongSessionOptions, log: (line: string) => void = () => undefined): Promise<LongSessionRow[]> {
  const unavailable = options.postgres ? await postgresUnavailable() : undefined;
  if (unavailable) log(`long-session: no PostgreSQL rows: ${unavailable}`);
  const fake = await startFakeLLMProcess(0);
  const casesOn = (postgres: boolean): { name: string; job: Job }[] => {
    const suffix = postgres ? ", PostgreSQL" : "";
    return [
      ...options.histories.map((history) => ({
        name: `long session, ${history.toLocaleString("en-US")} prior msgs${suffix}`,
        job: { kind: "long" as const, baseURL: fake.baseURL, history, turns: options.steadyTurns, postgres },
      })),
      { name: `tool-heavy turn, 30 rounds × 20 KB${suffix}`, job: { kind: "heavy", baseURL: fake.baseURL, turns: options.heavyTurns, warmup: 1, postgres } },
    ];
  };
  const cases = [...casesOn(false), ...(options.postgres && !unavailable ? casesOn(true) : [])];
  const results = new Map<string, CaseResult[]>();
  try {
    for (let run = 0; run < options.runs; run++) {
      for (const c of cases) {
        log(`long-session: ${c.name}, run ${run + 1}/${options.runs}`);
        results.set(c.name, [...(results.get(c.name) ?? []), await runWorker(c.job)]);
      }
    }
  } finally {
    await fake.close();
  }
  return cases.map(({ name }) => {
    const r = results.get(name)!;
    const pick = (f: (x: CaseResult) => number | undefined) => {
      const values = r.map(f).filter((v): v is number => v !== undefined);
      return values.length ? spread(values) : undefined;
    };
    return {
      case: name,
      ...(pick((x) => x.firstCpuMs) ? { firstCpuMs: pick((x) => x.firstCpuMs), firstWallMs: pick((x) => x.firstWallMs) } : {}),
      cpuMsPerTurn: pick((x) => x.cpuMsPerTurn)!,
      wallMsPerTurn: pick((x) => x.wallMsPerTurn)!,
      seededRssMiB: pick((x) => x.seededRssMiB)!,
      peakRssMiB: pick((x) => x.peakRssMiB)!,
    };
  });
}

export function formatLongSessionBench(rows: LongSessionRow[]): string {
  const f = (s: Spread | undefined, digits = 1) => (s ? `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})` : "—");
  return [
    table(
      ["case (nanobot-loop)", "first turn CPU ms", "first turn wall ms", "CPU ms/turn", "wall ms/turn", "RSS before turns MiB", "peak RSS MiB"],
      rows.map((r) => [r.case, f(r.firstCpuMs), f(r.firstWallMs), f(r.cpuMsPerTurn), f(r.wallMsPerTurn), f(r.seededRssMiB, 0), f(r.peakRssMiB, 0)]),
    ),
    "(median (min–max) over runs, a process per run; long session: the first turn replays the newest of the seeded history,",
    " CPU ms/turn is the 3-round bench-loop turn after it in the same session; tool-heavy: 30 rounds of one 20 KB tool result, fresh session per turn;",
    " PostgreSQL: the same on the PostgreSQL store (local server, a fresh database per process); CPU is nanobot's process only, not the server's)",
  ].join("\n");
}

if (process.argv.includes("--worker")) {
  try {
    const result = await runCase(JSON.parse(process.env.BENCH_JOB ?? "{}") as Job);
    process.send?.({ ok: true, result });
  } catch (err) {
    process.send?.({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
  process.disconnect?.();
} else if (process.argv[1]?.endsWith("long-session.ts")) {
  const runs = Number(process.argv.find((a) => a.startsWith("--runs="))?.slice(7) ?? 0);
  const options = process.argv.includes("--quick") ? LONG_QUICK : LONG_FULL;
  const rows = await runLongSessionBench(runs > 0 ? { ...options, runs } : options, (l) => process.stderr.write(`  … ${l}\n`));
  process.stdout.write(`${formatLongSessionBench(rows)}\n`);
}
