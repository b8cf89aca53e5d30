/**
 * Profiles one contender's `bench-loop` turn at a given history length, in-process, with the V8
 * sampling profiler switched on only around the measured turns (set-up and warm-up left out):
 *
 *   npx tsx bench/profile-turn.ts --history=1000 [--turns=40] [--warmup=10] [--contender=nanobot-loop]
 *                                 [--out=bench/profiles/loop-1000] [--no-profile] [--workload=loop|steady|heavy]
 *                                 [--place=memory|disk|lived] [--postgres]
 *
 * `loop` (default): each turn in its own session seeded with `history` messages (as the peers
 * bench); `steady`: every turn in ONE session seeded with `history` messages, after its first
 * turn; `heavy`: the `bench-heavy` turn (30 tool rounds of 20 KB), fresh session each.
 * `--place` (loop): where the seeded history is when a turn starts (see `HistoryPlace`; `lived`:
 * each session's first turn is run untimed before the warm-up, as the peers bench does).
 * `--postgres`: nanobot-loop on the PostgreSQL store, in a throwaway database (support/postgres.ts).
 *
 * Prints CPU per turn (and how much of it ran on other threads than the main one: V8 compiles
 * optimized code and helps the GC on its own threads) and writes `<out>.md`, the top functions by self and by total time (the
 * summary kept in git), and `<out>.cpuprofile` (open it in Chrome DevTools or speedscope for the
 * flame graph; not committed). `--no-profile` only measures, for quick A/B runs.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { CreateContender, HistoryPlace } from "./contenders/types.js";
import { EXPECTED_ANSWER, prepareLoopSessions } from "./contenders/types.js";
import { mainThreadCpuMs } from "./support/proc-cpu.js";
import { scratchDatabase } from "./support/postgres.js";
import { startFakeLLMProcess } from "./support/processes.js";
import { costTable, summarise } from "./support/profile-summary.js";
import { arg } from "./support/args.js";

const history = Number(arg("history", "1000"));
const turns = Number(arg("turns", "40"));
const warmup = Number(arg("warmup", "10"));
const contenderName = arg("contender", "nanobot-loop");
const profile = !process.argv.includes("--no-profile");
const workload = arg("workload", "loop");
/** nanobot-loop on the PostgreSQL store (a throwaway database on support/postgres.ts's server). */
const postgres = process.argv.includes("--postgres");
const placeArg = arg("place", "memory");
const place: HistoryPlace = placeArg === "disk" || placeArg === "lived" ? placeArg : "memory";
const stem = workload === "heavy" ? "heavy" : workload === "steady" ? `steady-${history}` : `${history}${place === "memory" ? "" : `-${place}`}`;
const out = arg("out", join("bench", "profiles", `${contenderName}-${stem}`));

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};


async function main(): Promise<void> {
  for (const method of ["log", "info", "warn", "debug"] as const) console[method] = () => undefined;
  const fake = await startFakeLLMProcess(0);
  const workDir = mkdtempSync(join(tmpdir(), "nanobot-profile-"));
  process.env.HOME = workDir;
  const database = postgres ? await scratchDatabase() : undefined;
  try {
    const mod = (await import(`./contenders/${contenderName}.js`)) as { createContender: CreateContender };
    const c = await mod.createContender({ baseURL: fake.baseURL, workDir, ...(database ? { storeUrl: database.url } : {}) });
    const check = (a: string) => {
      if (a.trim() !== EXPECTED_ANSWER) throw new Error(`unexpected answer ${JSON.stringify(a)}`);
    };
    const run = (i: number) => (workload === "heavy" ? c.heavyTurn!(i) : c.loopTurn(workload === "steady" ? 0 : i));
    if (workload === "loop") await prepareLoopSessions(c, history, warmup + turns, place, check);
    else if (workload === "steady") await c.prepareLoop(history, 1);
    for (let i = 0; i < warmup; i++) check(await run(i));
    await fake.reset(0);
    const session = new Session();
    if (profile) {
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.setSamplingInterval", { interval: 100 });
      await session.post("Profiler.start");
    }
    const cpu0 = cpuUs();
    const split0 = process.cpuUsage();
    const main0 = mainThreadCpuMs();
    for (let i = warmup; i < warmup + turns; i++) check(await run(i));
    const cpuMs = (cpuUs() - cpu0) / 1000 / turns;
    const split = process.cpuUsage(split0);
    const mainMs = (mainThreadCpuMs() - main0) / turns;
    // Stopped before asking the fake for its counters: that one fetch (undici's first use) is not the turn's.
    const stopped = profile ? await session.post("Profiler.stop") : undefined;
    const stats = await fake.stats();
    const requests = stats.requests / turns;
    const kbPerRequest = stats.bodyBytes / Math.max(1, stats.requests) / 1024;
    process.stdout.write(
      `${contenderName} @ ${history} prior msgs: ${cpuMs.toFixed(2)} ms CPU/turn, ${requests} LLM requests/turn, ${kbPerRequest.toFixed(1)} KB/request (user ${(split.user / 1000 / turns).toFixed(2)} + system ${(split.system / 1000 / turns).toFixed(2)} ms; main thread ${mainMs.toFixed(2)} + other threads ${(cpuMs - mainMs).toFixed(2)} ms)\n`,
    );
    if (stopped) {
      const p = stopped.profile;
      session.disconnect();
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(`${out}.cpuprofile`, JSON.stringify(p));
      const { costs, totalUs } = summarise(p);
      writeFileSync(
        `${out}.md`,
        [
          `# ${contenderName}: ${workload} workload at ${history} prior messages`,
          "",
          `\`npx tsx bench/profile-turn.ts --workload=${workload} --history=${history} --turns=${turns} --contender=${contenderName}\`: ${turns} measured turns after ${warmup} warm-up turns,`,
          `${cpuMs.toFixed(2)} ms process CPU per turn (${requests} LLM requests per turn), sampled every 100 µs.`,
          "",
          "## Top functions by self time",
          "",
          costTable(costs, "selfUs", totalUs, turns),
          "",
          "## Top functions by total time (inclusive)",
          "",
          costTable(costs, "totalUs", totalUs, turns, 45),
          "",
        ].join("\n"),
      );
      process.stdout.write(`wrote ${out}.md and ${out}.cpuprofile\n`);
    }
    await c.close?.();
  } finally {
    await fake.close();
    rmSync(workDir, { recursive: true, force: true });
    await database?.drop();
  }
}

await main();
