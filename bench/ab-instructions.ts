/**
 * The product turn's cost in instructions, this tree against another checkout: each tree's
 * plain bench worker (support/plain-worker.ts, the peers bench's `nanobot-loop` job) runs under
 * valgrind twice, with `--short` and `--long` measured turns and the same prepared sessions; the
 * difference of the two totals over the difference of the turns is the instructions of one turn
 * in a warm process, start-up and preparation cancelled out. Every thread counts (V8's compiles
 * and GC helpers too); the kernel's work (socket writes, page writes) does not.
 *
 *   npx tsx bench/ab-instructions.ts --base=/tmp/base [--history=100] [--short=20] [--long=220]
 *
 * Wall and CPU time on a shared 2-core VM move by ±10 % between runs of the same build, more
 * than most changes; an instruction count repeats to ~0.2 % (the same build twice: 30.63M and
 * 30.67M per turn). Valgrind runs the worker ~50× slower: ~1 minute per tree at 100 messages.
 * `--base` is a checkout as for ab-turn.ts (`git archive <commit> | tar -x -C /tmp/base`, a
 * symlink to this tree's node_modules) with its library built (`npx tsc -p tsconfig.build.json`).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { WorkerJob } from "./contenders/worker.js";
import { plainWorker } from "./support/plain-worker.js";
import { REPO_DIR, startFakeLLMProcess } from "./support/processes.js";
import { arg } from "./support/args.js";

const base = arg("base", "");
const history = Number(arg("history", "100"));
const short = Number(arg("short", "20"));
const long = Number(arg("long", "220"));
const warmup = 20;
if (!base) throw new Error("--base=<checkout> is required");
if (!(long > short)) throw new Error("--long must be more than --short");

/** The tree's bundled worker, built by its own copy of plain-worker.ts. */
async function workerOf(tree: string): Promise<string> {
  if (tree === REPO_DIR.replace(/\/$/, "")) return plainWorker();
  const built = join(tree, "bench", ".worker", "worker.js");
  if (!existsSync(built)) {
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, ["--import", "tsx", "-e", `import("./bench/support/plain-worker.ts").then((m) => m.plainWorker())`], { cwd: tree, stdio: "inherit" });
      child.on("exit", resolve);
    });
    if (code !== 0 || !existsSync(built)) throw new Error(`could not build ${built}`);
  }
  return built;
}

async function instructions(tree: string, worker: string, job: WorkerJob): Promise<number> {
  const child = spawn("valgrind", ["--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", "--smc-check=all-non-file", process.execPath, worker], {
    cwd: tree,
    env: { ...process.env, BENCH_JOB: JSON.stringify(job) },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  let failure: string | undefined;
  child.on("message", (msg: { ok: boolean; error?: string }) => {
    if (!msg.ok) failure = msg.error ?? "failed";
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  const total = /I\s+refs:\s+([\d,]+)/.exec(stderr);
  if (failure || code !== 0 || !total) throw new Error(`${tree}: ${failure ?? `valgrind exited with ${code}`}\n${stderr.slice(-2000)}`);
  return Number(total[1]!.replace(/,/g, ""));
}

async function main(): Promise<void> {
  const fake = await startFakeLLMProcess(0);
  try {
    const trees = [base.replace(/\/$/, ""), REPO_DIR.replace(/\/$/, "")];
    const perTurn: number[] = [];
    for (const tree of trees) {
      const worker = await workerOf(tree);
      const job = (runs: number): WorkerJob => ({ contender: "nanobot-loop", baseURL: fake.baseURL, workload: "loop", history, runs, warmup, sessions: warmup + long });
      const a = await instructions(tree, worker, job(short));
      const b = await instructions(tree, worker, job(long));
      perTurn.push((b - a) / (long - short));
      process.stdout.write(`${tree}: ${(perTurn.at(-1)! / 1e6).toFixed(3)}M instructions per turn at ${history} prior messages\n`);
    }
    process.stdout.write(`this/base: ${(perTurn[1]! / perTurn[0]!).toFixed(3)}\n`);
  } finally {
    await fake.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
