/**
 * Engine overhead: CPU time the runner spends per iteration (governance, estimation, request
 * building, event plumbing, tool dispatch) with an instant in-process model and an instant
 * tool, so provider and tool time are zero; and governContext alone at 10k and 100k messages.
 *
 * Run: npx tsx bench/engine-overhead.ts   (prints a table, writes bench/results/engine-overhead.json)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { EventStream } from "../src/core/event-stream.js";
import { assistantMessage, toolMessage, userMessage } from "../src/core/message-helpers.js";
import type { LanguageModel, ModelEvent, ModelResponse } from "../src/core/llm.js";
import { modelErrorEvent } from "../src/core/llm.js";
import type { Message, ToolCallPart } from "../src/core/messages.js";
import { createTokenEstimator, governContext, runAgent, type TokenEstimator } from "../src/engine/index.js";
import type { Tool } from "../src/tools/tool.js";

export interface EngineOverheadRow {
  historyMessages: number;
  /** Runner CPU time per LLM iteration with a warm token cache, µs. */
  perIterationUs: number;
}

export interface GovernanceRow {
  messages: number;
  /** governContext with a warm token cache, ms per call (median). */
  warmMs: number;
  /** First call, tokenising every message, ms. */
  coldMs: number;
}

export interface EngineBenchResult {
  iterations: EngineOverheadRow[];
  governance: GovernanceRow[];
}

const LOREM = "The agent reads files, runs commands and answers questions about the project. ";

function history(size: number): Message[] {
  const out: Message[] = [];
  for (let i = 0; out.length < size; i++) {
    const call: ToolCallPart = { type: "toolCall", id: `h${i}`, name: "read_file", arguments: { path: `f${i}` }, rawArguments: `{"path":"f${i}"}` };
    out.push(userMessage(`Question ${i}: ${LOREM}`), assistantMessage("", [call]), toolMessage(call.id, "read_file", LOREM.repeat(3)), assistantMessage(`Answer ${i}: ${LOREM}`));
  }
  out.length = size;
  // End on a user message: the turn's input.
  out[size - 1] = userMessage(`Current question: ${LOREM}`);
  return out;
}

/** Answers instantly: a tool call for the first `toolRounds` calls, then text. */
function instantModel(toolRounds: number): LanguageModel {
  let calls = 0;
  return {
    provider: "bench",
    model: "gpt-4o",
    contextWindow: 100_000_000,
    stream() {
      const n = calls++;
      const stream = new EventStream<ModelEvent, ModelResponse>(modelErrorEvent);
      const done = n % (toolRounds + 1) === toolRounds;
      const call: ToolCallPart = { type: "toolCall", id: `c${n}`, name: "noop", arguments: {}, rawArguments: "{}" };
      const message = done ? assistantMessage("final") : assistantMessage("", [call]);
      stream.push({ type: "text_delta", delta: done ? "final" : "" });
      stream.end({ message, finishReason: done ? "stop" : "tool_calls", usage: { promptTokens: 0, completionTokens: 0 }, provider: "bench", model: "gpt-4o" });
      return stream;
    },
  };
}

const noop: Tool = { name: "noop", description: "does nothing", parameters: {}, readOnly: true, execute: async () => "ok" };

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

async function measureIterations(size: number, estimator: TokenEstimator, toolRounds: number, runs: number): Promise<number> {
  const messages = history(size);
  const spec = { messages, tools: [noop], estimator, maxToolIterations: toolRounds + 1 };
  // Warm-up: fills the token cache for the history and JIT-compiles the loop.
  await runAgent({ ...spec, model: instantModel(toolRounds) }).result();
  const start = cpuUs();
  let iterations = 0;
  for (let r = 0; r < runs; r++) {
    const result = await runAgent({ ...spec, model: instantModel(toolRounds) }).result();
    iterations += result.iterations;
  }
  return (cpuUs() - start) / iterations;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function measureGovernance(size: number, estimator: TokenEstimator, reps: number): GovernanceRow {
  const messages = history(size);
  const options = { estimator, budget: 100_000_000, maxToolResultChars: 16_000 };
  let t = performance.now();
  governContext(messages, options);
  const coldMs = performance.now() - t;
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    t = performance.now();
    governContext(messages, options);
    times.push(performance.now() - t);
  }
  return { messages: size, warmMs: median(times), coldMs };
}

export async function runEngineOverheadBench(): Promise<EngineBenchResult> {
  const estimator = createTokenEstimator({ model: "gpt-4o" });
  await estimator.load();
  // JIT warm-up, so the first measured size does not pay for compilation.
  await measureIterations(100, estimator, 10, 50);
  const iterations: EngineOverheadRow[] = [];
  for (const [size, runs] of [[10, 200], [100, 100], [1_000, 20], [10_000, 5]] as const) {
    iterations.push({ historyMessages: size, perIterationUs: await measureIterations(size, estimator, 10, runs) });
  }
  const governance = [measureGovernance(10_000, estimator, 21), measureGovernance(100_000, estimator, 7)];
  return { iterations, governance };
}

export function formatEngineOverheadBench(result: EngineBenchResult): string {
  const lines = ["history messages   runner CPU per iteration"];
  for (const r of result.iterations) lines.push(`${r.historyMessages.toLocaleString("en-US").padStart(16)}   ${r.perIterationUs.toFixed(1).padStart(10)} µs`);
  lines.push("", "governContext      warm (median)   cold (first call)");
  for (const g of result.governance) {
    lines.push(`${g.messages.toLocaleString("en-US").padStart(13)}   ${g.warmMs.toFixed(2).padStart(10)} ms   ${g.coldMs.toFixed(1).padStart(12)} ms`);
  }
  return `${lines.join("\n")}\n`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await runEngineOverheadBench();
  process.stdout.write(formatEngineOverheadBench(result));
  const resultsDir = fileURLToPath(new URL("./results/", import.meta.url));
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, "engine-overhead.json"), `${JSON.stringify({ date: new Date().toISOString(), ...result }, null, 2)}\n`);
}
