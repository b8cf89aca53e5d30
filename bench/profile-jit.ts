/**
 * What V8's optimizing compiler costs inside the peers bench's measured window (issue 25).
 *
 *   npx tsx bench/profile-jit.ts [--history=0] [--warmup=20] [--runs=200] [--rounds=3]
 *                                [--contenders=nanobot-loop,jcheese-nanobot] [--top=15]
 *
 * Each contender's loop turn runs in the peers bench's own worker process (the same job: `warmup`
 * turns, then `runs` measured ones, each in a fresh session with `history` prior messages), with
 * V8's `--trace-opt --trace-deopt` (support/jit-trace.ts); this sums the compile times V8
 * reports for the functions optimized inside the window, counts them and the deoptimizations,
 * and lists the costliest functions of the median round.
 *
 * Why: the process CPU the peers bench reads over 200 turns after a 20-turn warm-up includes the
 * optimizing compiles of code that only became hot in the window (on V8's helper threads). A
 * contender with more or larger hot functions pays more there, whatever its steady-state cost.
 */
import type { WorkerJob } from "./contenders/worker.js";
import { runTraced } from "./support/jit-trace.js";
import type { WindowTrace } from "./support/jit-trace.js";
import { plainWorker } from "./support/plain-worker.js";
import { startFakeLLMProcess } from "./support/processes.js";
import { median } from "./support/stats.js";
import { arg } from "./support/args.js";

const history = Number(arg("history", "0"));
const warmup = Number(arg("warmup", "20"));
const runs = Number(arg("runs", "200"));
const rounds = Number(arg("rounds", "3"));
const contenders = arg("contenders", "nanobot-loop,jcheese-nanobot").split(",");
const top = Number(arg("top", "15"));

async function main(): Promise<void> {
  const worker = await plainWorker();
  const fake = await startFakeLLMProcess(0);
  const measured = new Map<string, { cpuMs: number; mainMs: number; trace: WindowTrace }[]>();
  try {
    for (let round = 0; round < rounds; round++) {
      // Interleaved, the order reversed every other round, as the peers bench does.
      const order = round % 2 === 0 ? contenders : [...contenders].reverse();
      for (const contender of order) {
        const job: WorkerJob = { contender, baseURL: fake.baseURL, workload: "loop", history, runs, warmup };
        const { result, trace } = await runTraced(worker, job);
        const list = measured.get(contender) ?? [];
        list.push({ cpuMs: (result.cpuUsPerRun ?? Number.NaN) / 1000, mainMs: (result.mainThreadCpuUsPerRun ?? Number.NaN) / 1000, trace });
        measured.set(contender, list);
        process.stderr.write(`  … ${contender}, round ${round + 1} of ${rounds}\n`);
      }
    }
  } finally {
    await fake.close();
  }
  const out: string[] = [
    `# Optimizing compiles in the peers bench's window: ${warmup} warm-up turns, then ${runs} measured, ${history} prior messages`,
    "",
    `\`npx tsx bench/profile-jit.ts --history=${history} --warmup=${warmup} --runs=${runs} --rounds=${rounds}\`: medians of ${rounds} processes per contender, interleaved; the CPU is read with the traces on.`,
    "",
    "| contender | CPU ms/turn | main thread ms/turn | compiled in window | compile ms in window | compile ms/turn | deopts |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  const medianRounds = new Map<string, WindowTrace>();
  for (const [contender, list] of measured) {
    const totals = list.map((m) => m.trace.compiles.reduce((sum, c) => sum + c.ms, 0));
    // The round at the middle of the compile totals (the lower one of two, with an even count).
    const byTotal = totals.map((_, i) => i).sort((a, b) => totals[a]! - totals[b]!);
    medianRounds.set(contender, list[byTotal[(byTotal.length - 1) >> 1]!]!.trace);
    out.push(
      `| ${contender} | ${median(list.map((m) => m.cpuMs)).toFixed(2)} | ${median(list.map((m) => m.mainMs)).toFixed(2)} | ${median(list.map((m) => m.trace.compiles.length))} | ${median(totals).toFixed(0)} | ${(median(totals) / runs).toFixed(2)} | ${median(list.map((m) => m.trace.deopts.length))} |`,
    );
  }
  for (const [contender, trace] of medianRounds) {
    const byName = new Map<string, number>();
    for (const c of trace.compiles) byName.set(c.name, (byName.get(c.name) ?? 0) + c.ms);
    const costliest = [...byName].sort((a, b) => b[1] - a[1]).slice(0, top);
    out.push("", `## ${contender}: costliest compiles in the median round (ms in the window)`, "", costliest.map(([name, ms]) => `${name} ${ms.toFixed(1)}`).join(", "));
    if (trace.deopts.length > 0) out.push("", `deoptimizations: ${trace.deopts.join("; ")}`);
  }
  process.stdout.write(`${out.join("\n")}\n`);
}

await main();
