/**
 * Cost of persisting conversations as they grow: saving one turn and loading the model history
 * at 10 / 1,000 / 10,000 / 100,000 messages, for the SQLite store (append-only rows) and for a
 * whole-file JSONL rewrite of the same session (what the Python nanobot does on every save).
 *
 * Run: npx tsx bench/session-persistence.ts   (prints a table, writes bench/results/session-persistence.json)
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { assistantMessage, toolMessage, userMessage } from "../src/core/index.js";
import type { Message, ToolCallPart } from "../src/core/index.js";
import { SqliteSessionStore } from "../src/session/index.js";
import { messageToPy } from "../src/session/jsonl-format.js";

export interface SessionBenchRow {
  messages: number;
  /** SQLite: beginTurn + checkpoint + completeTurn of a 4-message tool turn, ms per turn. */
  sqliteSaveTurnMs: number;
  /** SQLite: loadHistory of the whole thread, ms. */
  sqliteLoadAllMs: number;
  /** SQLite: loadHistory with a 32k-token budget (reads newest rows only), ms. */
  sqliteLoadBudgetMs: number;
  /** JSONL: serialize and rewrite the whole file after appending one turn, ms per turn. */
  jsonlSaveTurnMs: number;
  /** JSONL: read and parse the whole file, ms. */
  jsonlLoadMs: number;
}

export interface SessionBenchOptions {
  lengths?: number[];
  /** Turns saved per measurement (SQLite; JSONL uses fewer on big sessions). */
  saveReps?: number;
  loadReps?: number;
}

const LOREM = "The quick brown fox jumps over the lazy dog while the agent reads files and answers. ";

/** A realistic 4-message tool turn (user, assistant with a call, tool result, answer). */
function turnMessages(n: number): Message[] {
  const call: ToolCallPart = { type: "toolCall", id: `call_${n}`, name: "read_file", arguments: { path: `notes/${n}.md` }, rawArguments: `{"path":"notes/${n}.md"}` };
  return [
    userMessage(`Question ${n}: ${LOREM}`),
    assistantMessage("", [call]),
    toolMessage(call.id, "read_file", LOREM.repeat(4)),
    assistantMessage(`Answer ${n}: ${LOREM.repeat(2)}`),
  ];
}

function time(fn: () => void): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export async function runSessionPersistenceBench(options: SessionBenchOptions = {}): Promise<SessionBenchRow[]> {
  const lengths = options.lengths ?? [10, 1_000, 10_000, 100_000];
  const saveReps = options.saveReps ?? 50;
  const loadReps = options.loadReps ?? 5;
  const dir = mkdtempSync(join(tmpdir(), "nanobot-bench-session-"));
  const rows: SessionBenchRow[] = [];
  try {
    // Warm the JIT and the SQLite page cache paths so the first measured length is not penalised.
    const warm = new SqliteSessionStore({ path: join(dir, "warmup.db") });
    for (let i = 0; i < 30; i++) {
      const [user, ...rest] = turnMessages(i);
      const turn = await warm.beginTurn("bench:warmup", user as Extract<Message, { role: "user" }>);
      await warm.completeTurn(turn.turnId, { content: "", newMessages: rest, toolsUsed: [], usage: { promptTokens: 0, completionTokens: 0 }, stopReason: "completed", iterations: 1 });
      await warm.loadHistory("bench:warmup");
    }
    await warm.close();
    for (const length of lengths) {
      const key = `bench:${length}`;
      const store = new SqliteSessionStore({ path: join(dir, `state-${length}.db`) });
      // Prefill in one transaction (setup, not measured).
      const prefill: Message[] = [];
      for (let i = 0; prefill.length < length; i++) prefill.push(...turnMessages(i));
      prefill.length = length;
      await store.transaction((q) => q.append(q.currentThread(key).id, prefill, null));

      const saves: number[] = [];
      for (let r = 0; r < saveReps; r++) {
        const [user, assistant, tool, answer] = turnMessages(length + r) as [Message, Message, Message, Message];
        saves.push(
          await timeAsync(async () => {
            const turn = await store.beginTurn(key, user as Extract<Message, { role: "user" }>);
            await store.saveCheckpoint(turn.turnId, { phase: "tools_completed", iteration: 1, newMessages: [assistant, tool] });
            await store.completeTurn(turn.turnId, {
              content: "",
              newMessages: [assistant, tool, answer],
              toolsUsed: ["read_file"],
              usage: { promptTokens: 1, completionTokens: 1 },
              stopReason: "completed",
              iterations: 2,
            });
          }),
        );
      }
      const loadsAll: number[] = [];
      const loadsBudget: number[] = [];
      for (let r = 0; r < loadReps; r++) {
        loadsAll.push(await timeAsync(() => store.loadHistory(key)));
        loadsBudget.push(await timeAsync(() => store.loadHistory(key, { tokenBudget: 32_000 })));
      }
      const all = await store.loadMessages(key);
      await store.close();

      // The Python way: the whole session is rewritten on every save.
      const file = join(dir, `session-${length}.jsonl`);
      const lines = all.map((m) => messageToPy(m));
      const meta = { _type: "metadata", key, created_at: "", updated_at: "", metadata: {}, last_consolidated: 0 };
      const jsonlReps = length >= 100_000 ? 3 : length >= 10_000 ? 10 : saveReps;
      const jsonlSaves: number[] = [];
      for (let r = 0; r < jsonlReps; r++) {
        lines.push(...turnMessages(length + saveReps + r).map((m) => messageToPy(m)));
        jsonlSaves.push(
          time(() => {
            let out = `${JSON.stringify({ ...meta, updated_at: new Date().toISOString() })}\n`;
            for (const line of lines) out += `${JSON.stringify(line)}\n`;
            writeFileSync(file, out, "utf8");
          }),
        );
      }
      const jsonlLoads: number[] = [];
      for (let r = 0; r < loadReps; r++) {
        jsonlLoads.push(time(() => readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as unknown)));
      }
      rows.push({
        messages: length,
        sqliteSaveTurnMs: median(saves),
        sqliteLoadAllMs: median(loadsAll),
        sqliteLoadBudgetMs: median(loadsBudget),
        jsonlSaveTurnMs: median(jsonlSaves),
        jsonlLoadMs: median(jsonlLoads),
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}

export function formatSessionBench(rows: SessionBenchRow[]): string {
  const header = ["messages", "sqlite save/turn", "sqlite load all", "sqlite load 32k", "jsonl save/turn", "jsonl load"];
  const body = rows.map((r) => [
    r.messages.toLocaleString("en-US"),
    ...[r.sqliteSaveTurnMs, r.sqliteLoadAllMs, r.sqliteLoadBudgetMs, r.jsonlSaveTurnMs, r.jsonlLoadMs].map((v) => `${v.toFixed(3)} ms`),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join("  ");
  const first = rows[0];
  const last = rows.at(-1);
  const ratio = first && last ? `\nsqlite save/turn ratio ${last.messages.toLocaleString("en-US")} vs ${first.messages}: ${(last.sqliteSaveTurnMs / first.sqliteSaveTurnMs).toFixed(2)}x` : "";
  return `${[line(header), ...body.map(line)].join("\n")}${ratio}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runSessionPersistenceBench();
  process.stdout.write(formatSessionBench(rows));
  const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, "session-persistence.json"), `${JSON.stringify({ date: new Date().toISOString(), rows }, null, 2)}\n`);
}
