/**
 * In-process A/B of the product turn: this tree's `nanobot-loop` contender against the same
 * contender of another checkout (`--base=/path/to/checkout`, its own modules, its own home and
 * state.db), both in ONE process against one fake LLM, measured in alternating batches so the
 * shared machine's drift hits both alike. Prints the median CPU per turn of each and their ratio.
 *
 *   npx tsx bench/ab-turn.ts --base=/tmp/turn-base [--history=0] [--turns=20] [--rounds=10] [--warmup=20]
 *
 * A checkout for `--base`: `git archive <commit> | tar -x -C /tmp/turn-base` and a symlink to
 * this tree's node_modules. Whole-turn figures of separate processes move by ±20 % on a loaded
 * machine; this resolves a change of a few percent.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Contender, CreateContender } from "./contenders/types.js";
import { EXPECTED_ANSWER } from "./contenders/types.js";
import { startFakeLLMProcess } from "./support/processes.js";
import { arg } from "./support/args.js";

const base = arg("base", "");
const history = Number(arg("history", "0"));
const perBatch = Number(arg("turns", "20"));
const rounds = Number(arg("rounds", "10"));
const warmup = Number(arg("warmup", "20"));
if (!base) throw new Error("--base=<checkout> is required");

const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  for (const method of ["log", "info", "warn", "debug"] as const) console[method] = () => undefined;
  const fake = await startFakeLLMProcess(0);
  const dirs: string[] = [];
  const open = async (root: string): Promise<{ c: Contender; next: () => number }> => {
    const workDir = mkdtempSync(join(tmpdir(), "nanobot-ab-"));
    dirs.push(workDir);
    const mod = (await import(join(root, "bench", "contenders", "nanobot-loop.ts"))) as { createContender: CreateContender };
    const c = await mod.createContender({ baseURL: fake.baseURL, workDir });
    await c.prepareLoop(history, warmup + perBatch * rounds);
    let i = 0;
    return { c, next: () => i++ };
  };
  try {
    const sides = { base: await open(base), this: await open(join(import.meta.dirname, "..")) };
    const turn = async (side: (typeof sides)["this"]): Promise<void> => {
      const answer = await side.c.loopTurn(side.next());
      if (answer.trim() !== EXPECTED_ANSWER) throw new Error(`unexpected answer ${JSON.stringify(answer)}`);
    };
    for (let i = 0; i < warmup; i++) for (const side of Object.values(sides)) await turn(side);
    // Each side counts tokens as its product does (loading the tokenizer when it would).
    const times: Record<keyof typeof sides, number[]> = { base: [], this: [] };
    for (let r = 0; r < rounds; r++) {
      for (const name of (r % 2 === 0 ? ["base", "this"] : ["this", "base"]) as Array<keyof typeof sides>) {
        const start = cpuUs();
        for (let i = 0; i < perBatch; i++) await turn(sides[name]);
        times[name].push((cpuUs() - start) / 1000 / perBatch);
      }
    }
    const b = median(times.base);
    const t = median(times.this);
    const ratios = times.this.map((x, i) => x / times.base[i]!);
    process.stdout.write(
      `${history} prior msgs: base ${b.toFixed(2)} ms, this ${t.toFixed(2)} ms CPU/turn (medians of ${rounds} batches of ${perBatch}); ` +
        `this/base per round: median ${median(ratios).toFixed(3)} [${ratios.map((x) => x.toFixed(2)).join(" ")}]\n`,
    );
    for (const side of Object.values(sides)) await side.c.close?.();
  } finally {
    await fake.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

await main();
