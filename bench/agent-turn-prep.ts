/**
 * Turn preparation time — the restore (profile, dangling turns, history) and build (system
 * prompt from workspace files, memory, skills, history log) stages of the AgentLoop — for
 * sessions of 30, 1,000 and 10,000 messages. The Python nanobot takes 10+ s here on long
 * sessions (its issue #5843); the target is < 50 ms at 10,000 messages.
 *
 * Run: npx tsx bench/agent-turn-prep.ts   (prints a table, writes bench/results/agent-turn-prep.json)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { LoopHost } from "../src/agent/loop-host.js";
import { ContextBuilder } from "../src/agent/context-builder.js";
import { createBuiltinCommands } from "../src/agent/commands/builtin.js";
import { Runtime } from "../src/agent/runtime.js";
import type { AgentProfile } from "../src/agent/runtime.js";
import { SessionLanes } from "../src/agent/session-lanes.js";
import { SubagentManager } from "../src/agent/subagents.js";
import { runTurnStages } from "../src/agent/turn-runner.js";
import { resolveConfig } from "../src/config/load.js";
import { EventStream } from "../src/core/event-stream.js";
import { assistantMessage, toolMessage, userMessage } from "../src/core/message-helpers.js";
import { modelErrorEvent } from "../src/core/llm.js";
import type { LanguageModel, ModelEvent, ModelResponse } from "../src/core/llm.js";
import type { Message, ToolCallPart } from "../src/core/messages.js";
import { HistoryLog } from "../src/memory/history-log.js";
import { ensureWorkspace } from "../src/memory/workspace.js";

export interface TurnPrepRow {
  messages: number;
  /** Median ms of the restore stage. */
  restoreMs: number;
  /** Median ms of the build stage. */
  buildMs: number;
  /** Median ms of restore + build. */
  prepMs: number;
}

export interface TurnPrepOptions {
  lengths?: number[];
  reps?: number;
}

const LOREM = "The quick brown fox jumps over the lazy dog while the agent reads files and answers. ";

function turnMessages(n: number): Message[] {
  const call: ToolCallPart = { type: "toolCall", id: `call_${n}`, name: "read_file", arguments: { path: `notes/${n}.md` }, rawArguments: `{"path":"notes/${n}.md"}` };
  return [userMessage(`Question ${n}: ${LOREM}`), assistantMessage("", [call]), toolMessage(call.id, "read_file", LOREM.repeat(4)), assistantMessage(`Answer ${n}: ${LOREM.repeat(2)}`)];
}

/** Answers at once, so a turn's time is all preparation and persistence. */
const instantModel: LanguageModel = {
  provider: "bench",
  model: "gpt-4o",
  contextWindow: 200_000,
  stream() {
    const stream = new EventStream<ModelEvent, ModelResponse>(modelErrorEvent);
    stream.end({ message: assistantMessage("ok"), finishReason: "stop", usage: { promptTokens: 0, completionTokens: 0 }, provider: "bench", model: "gpt-4o" });
    return stream;
  },
};

class BenchRuntime extends Runtime {
  override async resolveAgent(name?: string, overrides: { modelRef?: string } = {}): Promise<AgentProfile> {
    return { ...(await super.resolveAgent(name, overrides)), model: instantModel };
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export async function runAgentTurnPrepBench(options: TurnPrepOptions = {}): Promise<TurnPrepRow[]> {
  const lengths = options.lengths ?? [30, 1_000, 10_000];
  const reps = options.reps ?? 15;
  const root = mkdtempSync(join(tmpdir(), "nanobot-bench-prep-"));
  const home = join(root, "home");
  const workspace = join(root, "workspace");
  const env = { HOME: root, NANOBOT_HOME: home };
  const { config } = resolveConfig(
    { providers: { custom: { apiBase: "http://127.0.0.1:9/v1", apiKey: "sk-bench" } }, agents: { defaults: { model: "custom/gpt-4o", workspace } } },
    { env, cwd: root, envProviders: false },
  );
  const runtime = new BenchRuntime({ config, home, env });
  ensureWorkspace(workspace);
  writeFileSync(join(workspace, "USER.md"), `# User\n\n${LOREM.repeat(10)}\n`);
  writeFileSync(join(workspace, "memory", "MEMORY.md"), `# Memory\n\n${`- ${LOREM}\n`.repeat(40)}`);
  const log = new HistoryLog(workspace);
  for (let i = 0; i < 200; i++) log.append(`bench:${i % 3 === 0 ? 10_000 : 0}`, `Summary ${i}: ${LOREM}`);
  const context = new ContextBuilder({ workspace, env, timezone: "UTC" });
  const commands = createBuiltinCommands();
  const lanes = new SessionLanes(20);
  const subagents = new SubagentManager({ limit: 1, workspace, logger: runtime.logger, onResult: () => undefined, failOnToolError: true });
  const host = new LoopHost({ runtime, commands, context, subagents, lanes, startedAt: Date.now(), now: Date.now });
  const deps = { runtime, context, host, consolidationRatio: 0.5, consolidate: false };
  const rows: TurnPrepRow[] = [];
  try {
    const store = runtime.store();
    for (const length of lengths) {
      const key = `bench:${length}`;
      const prefill: Message[] = [];
      for (let i = 0; prefill.length < length; i++) prefill.push(...turnMessages(i));
      prefill.length = length;
      await store.appendMessages(key, prefill);
      const restore: number[] = [];
      const build: number[] = [];
      // One warm-up turn per length, then the measured ones.
      for (let r = 0; r <= reps; r++) {
        const { timings } = await runTurnStages(deps, { request: { sessionKey: key, content: `bench turn ${r}` }, sessionKey: key, signal: new AbortController().signal });
        if (r === 0) continue;
        restore.push(timings.find((t) => t.stage === "restore")?.ms ?? NaN);
        build.push(timings.find((t) => t.stage === "build")?.ms ?? NaN);
      }
      const restoreMs = median(restore);
      const buildMs = median(build);
      rows.push({ messages: length, restoreMs, buildMs, prepMs: median(restore.map((v, i) => v + (build[i] ?? 0))) });
    }
  } finally {
    await runtime.close();
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

export function formatAgentTurnPrepBench(rows: TurnPrepRow[]): string {
  const header = ["messages", "restore", "build", "restore+build"];
  const body = rows.map((r) => [r.messages.toLocaleString("en-US"), ...[r.restoreMs, r.buildMs, r.prepMs].map((v) => `${v.toFixed(2)} ms`)]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join("  ");
  return `${[line(header), ...body.map(line)].join("\n")}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rows = await runAgentTurnPrepBench();
  process.stdout.write(formatAgentTurnPrepBench(rows));
  const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, "agent-turn-prep.json"), `${JSON.stringify({ date: new Date().toISOString(), rows }, null, 2)}\n`);
}
