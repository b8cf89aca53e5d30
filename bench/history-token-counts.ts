/**
 * What stored token counts save when a turn replays a history it has not seen in this process
 * (issue 25): the product turn's restore read (`loadHistory` with the exact estimator, as
 * turn-runner.ts calls it) of a fresh session whose rows were written with counts, against one
 * whose rows were written without (rows of a nanobot before schema v4, or written before the
 * tokenizer loaded). Each read is a new store on the same file, so nothing is cached between
 * reads but the tokenizer's own slice cache, which real replays of new sessions do not hit either.
 *
 *   npx tsx bench/history-token-counts.ts [--messages=100,180] [--reps=21]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assistantMessage, userMessage } from "../src/core/message-helpers.js";
import type { Message } from "../src/core/messages.js";
import { createTokenEstimator } from "../src/engine/tokens/estimator.js";
import { SqliteSessionStore } from "../src/session/sqlite-store.js";
import { priorTurns } from "./contenders/types.js";
import { arg } from "./support/args.js";

const lengths = arg("messages", "100,180").split(",").map(Number);
const reps = Number(arg("reps", "21"));

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "nanobot-token-counts-"));
  const path = join(dir, "state.db");
  const writer = createTokenEstimator({ model: "custom/bench-loop" });
  await writer.load();
  const withCounts = new SqliteSessionStore({ path, tokenCounter: (m) => writer.exact(m) });
  const without = new SqliteSessionStore({ path });
  const history = (n: number): Message[] => priorTurns(n).map((t) => (t.role === "user" ? userMessage(t.text) : assistantMessage(t.text)));
  try {
    for (const n of lengths) {
      const times: Record<"counted" | "uncounted", number[]> = { counted: [], uncounted: [] };
      for (let rep = 0; rep < reps + 2; rep++) {
        await withCounts.appendMessages(`counted-${n}-${rep}`, history(n));
        await without.appendMessages(`uncounted-${n}-${rep}`, history(n));
        // Alternating which goes first, so a drift of the shared machine hits both alike.
        for (const kind of rep % 2 === 0 ? (["counted", "uncounted"] as const) : (["uncounted", "counted"] as const)) {
          // A new process's view: a new store (empty parsed-message cache) and a new estimator.
          const reader = new SqliteSessionStore({ path });
          const estimator = createTokenEstimator({ model: "custom/bench-loop" });
          await estimator.load();
          const start = cpuMs();
          const loaded = await reader.loadHistory(`${kind}-${n}-${rep}`, { tokenBudget: 1_000_000, estimate: (m) => estimator.message(m) });
          const spent = cpuMs() - start;
          await reader.close();
          if (loaded.length !== n) throw new Error(`read ${loaded.length} of ${n} messages`);
          if (rep >= 2) times[kind].push(spent);
        }
      }
      const counted = median(times.counted);
      const uncounted = median(times.uncounted);
      process.stdout.write(
        `${n} messages: restore read ${uncounted.toFixed(2)} ms CPU without stored counts, ${counted.toFixed(2)} ms with (medians of ${reps}, ${(counted / uncounted).toFixed(2)}×)\n`,
      );
    }
  } finally {
    await withCounts.close();
    await without.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
