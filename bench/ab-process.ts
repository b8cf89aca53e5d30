/**
 * Process-level A/B of the product turn: this tree's `nanobot-loop` worker against another
 * checkout's, one process per run (as the peers bench runs them), the two builds alternating
 * run by run against one fake LLM. Prints the median CPU per turn of each, its main-thread and
 * other-thread parts, and the median of the paired ratios.
 *
 *   npx tsx bench/ab-process.ts --base=/tmp/base [--history=0] [--pairs=10] [--runs=200] [--warmup=20]
 *
 * Unlike `ab-turn.ts` (both builds in one process), each run here pays its own V8 compiles, so
 * a change in how much optimized code a turn needs shows. A checkout for `--base`:
 * `git worktree add /tmp/base <commit>` (or `git archive | tar -x`), a symlink to this tree's
 * node_modules, then `npm run build` and `npx tsx -e "import('./bench/support/plain-worker.ts').then((m) => m.plainWorker())"`
 * in it (this script says so when the base's worker is missing).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { runWorker } from "./peers-bench.js";
import { plainWorker } from "./support/plain-worker.js";
import { startFakeLLMProcess } from "./support/processes.js";
import { median } from "./support/stats.js";
import type { WorkerResult } from "./contenders/worker.js";
import { arg } from "./support/args.js";

const base = arg("base", "");
const history = Number(arg("history", "0"));
const pairs = Number(arg("pairs", "10"));
const runs = Number(arg("runs", history >= 1_000 ? "20" : history >= 100 ? "100" : "200"));
const warmup = Number(arg("warmup", "20"));
if (!base) throw new Error("--base=<checkout> is required");
const baseWorker = join(resolve(base), "bench", ".worker", "worker.js");
if (!existsSync(baseWorker)) throw new Error(`${baseWorker} is missing: build the base (npm run build) and its bench worker (see this file's header)`);

interface Sample {
  cpu: number;
  main: number;
}

const sample = (r: WorkerResult): Sample => ({ cpu: (r.cpuUsPerRun ?? Number.NaN) / 1000, main: (r.mainThreadCpuUsPerRun ?? Number.NaN) / 1000 });

async function main(): Promise<void> {
  const ours = await plainWorker();
  const fake = await startFakeLLMProcess(0);
  const sides = { base: [] as Sample[], this: [] as Sample[] };
  try {
    for (let pair = 0; pair < pairs; pair++) {
      // Alternating which goes first, so drift over a pair hits both alike.
      const order: ("base" | "this")[] = pair % 2 === 0 ? ["base", "this"] : ["this", "base"];
      for (const side of order) {
        await fake.reset(0);
        const job = { contender: "nanobot-loop", baseURL: fake.baseURL, workload: "loop" as const, history, runs, warmup };
        sides[side].push(sample(await runWorker(job, 600_000, side === "base" ? baseWorker : ours)));
      }
      process.stdout.write(`  … pair ${pair + 1}/${pairs}\n`);
    }
  } finally {
    await fake.close();
  }
  const line = (name: string, xs: Sample[]) =>
    `${name.padEnd(5)} CPU/turn ${median(xs.map((x) => x.cpu)).toFixed(2)} ms (${Math.min(...xs.map((x) => x.cpu)).toFixed(2)}–${Math.max(...xs.map((x) => x.cpu)).toFixed(2)}), main thread ${median(xs.map((x) => x.main)).toFixed(2)}, other threads ${median(xs.map((x) => x.cpu - x.main)).toFixed(2)}`;
  process.stdout.write(`nanobot-loop @ ${history} prior msgs, ${warmup} warm-up + ${runs} measured turns per run, ${pairs} pairs\n`);
  process.stdout.write(`${line("base", sides.base)}\n${line("this", sides.this)}\n`);
  const ratios = sides.this.map((x, i) => x.cpu / sides.base[i]!.cpu);
  process.stdout.write(`paired ratio this/base: ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})\n`);
}

await main();
