/**
 * A scripted OpenAI Chat Completions server for the benchmarks, run as its OWN process so its
 * CPU and memory are never charged to the runtime under test. Start it with
 * `node --import tsx bench/fake-llm-server.ts [--delay=MS]`; it listens on 127.0.0.1, port 0, and
 * prints `{"port":N}` as its first stdout line.
 *
 * The script is chosen by the request's `model` and decided by cheap string scans of the raw body
 * (no JSON parse): it counts `tool` messages after the last `user` message, so the same fake
 * serves fresh conversations and ones with long histories.
 * - `bench-loop`: one tool call to `lookup` per round for 2 rounds, then an answer (3 rounds);
 * - `bench-parallel`: 4 calls to `slow_read` in one round, then an answer;
 * - `bench-heavy`: one call to `big_read` per round for 30 rounds (each result is 20 KB), then an answer;
 * - anything else, and any request that offers no tools (a summary request such as the
 *   AgentLoop's memory consolidation): an answer straight away.
 * Every response is serialised once at start-up (JSON and SSE), so answering costs a lookup.
 *
 * Control (loopback only): `POST /_control {"delayMs":N}` changes the delay and resets the
 * counters; `GET /_stats` returns `{requests, firstRequestAt}` (epoch ms with µs precision,
 * comparable with `performance.timeOrigin + performance.now()` in other processes).
 */
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";

type Step = "loop1" | "loop2" | "parallel" | "answer" | `heavy${number}`;

/** Tool rounds of the `bench-heavy` script. */
export const HEAVY_ROUNDS = 30;

const ANSWER = "The benchmark answer: 42.";

function call(id: string, name: string, args: string): object {
  return { id, type: "function", function: { name, arguments: args } };
}

const TOOL_CALLS: Record<Exclude<Step, "answer">, object[]> = {
  loop1: [call("call_loop_1", "lookup", '{"key":"alpha"}')],
  loop2: [call("call_loop_2", "lookup", '{"key":"beta"}')],
  parallel: [0, 1, 2, 3].map((i) => call(`call_par_${i}`, "slow_read", `{"path":"file-${i}.txt"}`)),
};
for (let round = 0; round < HEAVY_ROUNDS; round++) TOOL_CALLS[`heavy${round}`] = [call(`call_heavy_${round}`, "big_read", `{"path":"big-${round}.txt"}`)];

const USAGE = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 };

function completion(step: Step): string {
  const calls = step === "answer" ? undefined : TOOL_CALLS[step];
  const message = calls ? { role: "assistant", content: null, tool_calls: calls } : { role: "assistant", content: ANSWER };
  return JSON.stringify({
    id: `chatcmpl-bench-${step}`,
    object: "chat.completion",
    created: 1_700_000_000,
    model: "bench",
    choices: [{ index: 0, message, logprobs: null, finish_reason: calls ? "tool_calls" : "stop" }],
    usage: USAGE,
  });
}

function sse(step: Step): string {
  const base = { id: `chatcmpl-bench-${step}`, object: "chat.completion.chunk", created: 1_700_000_000, model: "bench" };
  const chunk = (delta: object, finish: string | null, usage?: object) =>
    `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
  const calls = step === "answer" ? undefined : TOOL_CALLS[step];
  let out = chunk({ role: "assistant", content: "" }, null);
  if (calls) {
    calls.forEach((c, index) => {
      out += chunk({ tool_calls: [{ index, ...c }] }, null);
    });
    out += chunk({}, "tool_calls");
  } else {
    out += chunk({ content: ANSWER }, null);
    out += chunk({}, "stop");
  }
  // Usage in a final chunk with no choices, as OpenAI sends it with stream_options.include_usage.
  out += `data: ${JSON.stringify({ ...base, choices: [], usage: USAGE })}\n\n`;
  return `${out}data: [DONE]\n\n`;
}

const STEPS: Step[] = ["loop1", "loop2", "parallel", "answer", ...Array.from({ length: HEAVY_ROUNDS }, (_, i) => `heavy${i}` as const)];
const JSON_BODIES = new Map(STEPS.map((s) => [s, Buffer.from(completion(s))]));
const SSE_BODIES = new Map(STEPS.map((s) => [s, Buffer.from(sse(s))]));

/** Tool messages after the last user message, by scanning the raw body. */
function toolsSinceUser(body: string): number {
  const compact = body.includes('"role": "') ? body.replaceAll('"role": "', '"role":"') : body;
  const lastUser = compact.lastIndexOf('"role":"user"');
  let count = 0;
  for (let i = compact.indexOf('"role":"tool"', lastUser); i !== -1; i = compact.indexOf('"role":"tool"', i + 1)) count++;
  return count;
}

export function pickStep(body: string): Step {
  // A model cannot call tools it was not offered: a request without any answers in text.
  if (!body.includes('"tools":')) return "answer";
  if (body.includes('"bench-loop"')) {
    const tools = toolsSinceUser(body);
    return tools === 0 ? "loop1" : tools === 1 ? "loop2" : "answer";
  }
  if (body.includes('"bench-parallel"')) return toolsSinceUser(body) === 0 ? "parallel" : "answer";
  if (body.includes('"bench-heavy"')) {
    const tools = toolsSinceUser(body);
    return tools < HEAVY_ROUNDS ? `heavy${tools}` : "answer";
  }
  return "answer";
}

let delayMs = Number(process.argv.find((a) => a.startsWith("--delay="))?.slice(8) ?? 0);
let requests = 0;
let connections = 0;
let bodyBytes = 0;
/** Arrival → response written, ms, per chat request (the fake's own answer time, delay included). */
let answerTimes: number[] = [];
let firstRequestAt: number | null = null;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function summary(values: number[]): { p50: number; p99: number } | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

function send(res: ServerResponse, status: number, type: string, body: Buffer | string): void {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  // The delay counts from the request's arrival, so reading and scanning its body is part of it.
  const arrived = performance.now();
  const url = req.url ?? "/";
  if (url === "/_stats") return send(res, 200, "application/json", JSON.stringify({ requests, firstRequestAt, bodyBytes, connections, answerMs: summary(answerTimes) }));
  const body = await readBody(req);
  if (url === "/_control") {
    const parsed = JSON.parse(body || "{}") as { delayMs?: number };
    if (typeof parsed.delayMs === "number") delayMs = parsed.delayMs;
    requests = 0;
    connections = 0;
    bodyBytes = 0;
    answerTimes = [];
    firstRequestAt = null;
    return send(res, 200, "application/json", "{}");
  }
  if (!url.endsWith("/chat/completions")) return send(res, 404, "application/json", '{"error":{"message":"not found"}}');
  requests++;
  bodyBytes += body.length;
  firstRequestAt ??= performance.timeOrigin + performance.now();
  const step = pickStep(body);
  const streaming = body.includes('"stream":true');
  const wait = delayMs - (performance.now() - arrived);
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  if (streaming) {
    const payload = SSE_BODIES.get(step)!;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "content-length": payload.length });
    res.end(payload);
  } else {
    send(res, 200, "application/json", JSON_BODIES.get(step)!);
  }
  if (answerTimes.length < 100_000) answerTimes.push(performance.now() - arrived);
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    if (!res.headersSent) send(res, 500, "application/json", JSON.stringify({ error: { message: String(err) } }));
  });
});
server.keepAliveTimeout = 60_000;
// Connections opened since the last reset (a client that keeps its connections alive opens few).
server.on("connection", () => connections++);
server.listen(0, "127.0.0.1", () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === "object" && address ? address.port : 0 })}\n`);
});
// Ends with its parent: stdin closes when the harness exits or kills it.
process.stdin.on("end", () => server.close(() => process.exit(0)));
process.stdin.resume();
process.on("SIGTERM", () => process.exit(0));
