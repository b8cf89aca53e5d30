/**
 * Issue 24 item 3 (the Prometheus part): `GET /metrics` on a real gateway over loopback HTTP,
 * behind the API key, in the text exposition format, counting what real turns did.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { MetricsRegistry } from "../../src/gateway/metrics.js";
import { startGatewayFixture } from "./helpers.js";
import type { GatewayFixture } from "./helpers.js";

const KEY = "metrics-test-key-0001";
let fx: GatewayFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const auth = { authorization: `Bearer ${KEY}` };

async function chat(text: string): Promise<Response> {
  return fetch(`${fx!.url}/v1/chat/completions`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: text }], session_id: "metrics" }),
  });
}

/** The value of one sample line, e.g. `nanobot_tokens_total{type="prompt"}`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe("GET /metrics", () => {
  it("needs the API key, and counts turns, tokens, model calls, tools and store calls", async () => {
    fx = await startGatewayFixture({ apiKey: KEY, makeProcessor: (runtime) => new AgentLoop({ runtime }), env: { NANOBOT_RETRY_SCALE: "0" } });
    expect((await fetch(`${fx.url}/metrics`)).status).toBe(401);

    await writeFile(join(fx.root, "ws", "notes.txt"), "tulips\n");
    fx.fake.enqueue(
      { toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "notes.txt" } }], usage: { promptTokens: 40, completionTokens: 4 } },
      { text: "It says tulips.", usage: { promptTokens: 60, completionTokens: 5 } },
      { kind: "error", status: 400, body: { error: { message: "bad request", type: "invalid_request_error" } } },
    );
    expect((await chat("what is in notes.txt?")).status).toBe(200);
    expect((await chat("and now?")).status).toBe(502);

    const res = await fetch(`${fx.url}/metrics`, { headers: auth });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    expect(text).toContain("# TYPE nanobot_turns_total counter");
    expect(sample(text, 'nanobot_turns_total{stop_reason="completed",channel="api"}')).toBe(1);
    expect(sample(text, 'nanobot_turns_total{stop_reason="error",channel="api"}')).toBe(1);
    expect(sample(text, "nanobot_turn_duration_seconds_count")).toBe(2);
    expect(sample(text, 'nanobot_turn_duration_seconds_bucket{le="+Inf"}')).toBe(2);
    expect(sample(text, 'nanobot_tokens_total{type="prompt"}')).toBe(100);
    expect(sample(text, 'nanobot_tokens_total{type="completion"}')).toBe(9);
    expect(sample(text, 'nanobot_tool_turns_total{tool="read_file"}')).toBe(1);
    expect(sample(text, "nanobot_model_calls_total")).toBe(3);
    expect(sample(text, "nanobot_model_call_duration_seconds_count")).toBe(2);
    expect(sample(text, 'nanobot_store_operation_duration_seconds_count{operation="beginTurn"}')).toBe(2);
    expect(sample(text, 'nanobot_store_operation_duration_seconds_count{operation="completeTurn"}')).toBe(1);
    expect(sample(text, 'nanobot_store_operation_duration_seconds_count{operation="failTurn"}')).toBe(1);
    expect(sample(text, "nanobot_active_turns")).toBe(0);
    expect(sample(text, "nanobot_active_sessions")).toBe(0);
  });
});

/** Polls until `check` holds (a condition, not a duration). */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; !(await check()); i++) {
    if (i > 1000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function scrape(): Promise<string> {
  return (await fetch(`${fx!.url}/metrics`, { headers: auth })).text();
}

describe("GET /metrics: tool calls and errors by tool", () => {
  it("counts every call of a tool and the ones that failed", async () => {
    fx = await startGatewayFixture({ apiKey: KEY, makeProcessor: (runtime) => new AgentLoop({ runtime }) });
    await writeFile(join(fx.root, "ws", "notes.txt"), "tulips\n");
    fx.fake.enqueue(
      {
        toolCalls: [
          { id: "call_1", name: "read_file", arguments: { path: "notes.txt" } },
          { id: "call_2", name: "read_file", arguments: { path: "missing.txt" } },
        ],
      },
      { toolCalls: [{ id: "call_3", name: "list_dir", arguments: { path: "." } }] },
      { text: "One file, with tulips." },
    );
    expect((await chat("what is here?")).status).toBe(200);

    const text = await scrape();
    expect(text).toContain("# TYPE nanobot_tool_calls_total counter");
    expect(sample(text, 'nanobot_tool_calls_total{tool="read_file"}')).toBe(2);
    expect(sample(text, 'nanobot_tool_errors_total{tool="read_file"}')).toBe(1);
    expect(sample(text, 'nanobot_tool_calls_total{tool="list_dir"}')).toBe(1);
    expect(sample(text, 'nanobot_tool_errors_total{tool="list_dir"}')).toBeUndefined();
  });
});

describe("GET /metrics: the process", () => {
  it("reports CPU seconds, resident memory, the heap, event-loop busy time and GC pauses under Node's usual names", async () => {
    fx = await startGatewayFixture({ apiKey: KEY, makeProcessor: (runtime) => new AgentLoop({ runtime }) });
    fx.fake.enqueue({ text: "hello" });
    expect((await chat("hi")).status).toBe(200);
    const before = await scrape();
    expect(before).toContain("# TYPE process_cpu_seconds_total counter");
    expect(before).toContain("# TYPE nodejs_eventloop_busy_seconds_total counter");
    expect(before).toContain("# TYPE process_resident_memory_bytes gauge");
    expect(sample(before, "process_resident_memory_bytes")).toBeGreaterThan(10 * 2 ** 20);
    expect(sample(before, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    expect(sample(before, "nodejs_heap_size_total_bytes")).toBeGreaterThanOrEqual(sample(before, "nodejs_heap_size_used_bytes")!);
    // Work on the event loop (and garbage for the young generation) moves the counters.
    let junk: number[][] = [];
    for (let i = 0; i < 200_000; i++) junk.push([i, i + 1]);
    junk = [];
    await until(async () => (sample(await scrape(), 'nodejs_gc_duration_seconds_count{kind="minor"}') ?? 0) > 0, "a minor GC pause");
    const after = await scrape();
    expect(sample(after, "process_cpu_seconds_total")).toBeGreaterThan(sample(before, "process_cpu_seconds_total")!);
    expect(sample(after, "nodejs_eventloop_busy_seconds_total")).toBeGreaterThan(sample(before, "nodejs_eventloop_busy_seconds_total")!);
    expect(sample(after, 'nodejs_gc_duration_seconds_bucket{kind="minor",le="+Inf"}')).toBe(sample(after, 'nodejs_gc_duration_seconds_count{kind="minor"}'));
    expect(junk).toEqual([]);
  });
});

describe("GET /metrics: queue depth and active sessions", () => {
  it("shows turns waiting behind a session's turn and for a model slot, and the sessions with work", async () => {
    fx = await startGatewayFixture({
      apiKey: KEY,
      makeProcessor: (runtime) => new AgentLoop({ runtime }),
      env: { NANOBOT_MAX_CONCURRENT_REQUESTS: "1" },
    });
    // The first turn holds the only model slot: its answer stalls after one chunk.
    fx.fake.enqueue({ text: "a long answer that never ends", fault: { type: "stall", afterChunks: 1 } });
    const post = (session: string): Promise<unknown> =>
      fetch(`${fx!.url}/v1/chat/completions`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "hi" }], session_id: session }),
      }).catch(() => undefined);
    const first = post("alpha");
    await until(() => fx!.fake.requests.length === 1, "the first model call");
    expect(sample(await scrape(), "nanobot_turn_queue_depth")).toBe(0);
    const behind = post("alpha");
    const otherSession = post("beta");

    let text = "";
    await until(async () => sample((text = await scrape()), "nanobot_turn_queue_depth") === 2, "two waiting turns");
    expect(sample(text, "nanobot_active_sessions")).toBe(2);
    expect(sample(text, "nanobot_active_turns")).toBe(3);

    await fx.close();
    fx = undefined;
    await Promise.all([first, behind, otherSession]);
  });
});

describe("the exposition format", () => {
  it("renders cumulative buckets, escapes label values and reads gauges when scraped", () => {
    const registry = new MetricsRegistry();
    const h = registry.histogram("x_seconds", "An x.", [0.1, 1]);
    h.observe(0.05);
    h.observe(0.5);
    h.observe(5);
    registry.counter("y_total", "A y.").inc({ tool: 'say "hi"\\now' }, 2);
    let depth = 3;
    registry.gauge("z", "A z.", () => depth);
    depth = 7;
    expect(registry.render().split("\n")).toEqual([
      "# HELP x_seconds An x.",
      "# TYPE x_seconds histogram",
      'x_seconds_bucket{le="0.1"} 1',
      'x_seconds_bucket{le="1"} 2',
      'x_seconds_bucket{le="+Inf"} 3',
      "x_seconds_sum 5.55",
      "x_seconds_count 3",
      "# HELP y_total A y.",
      "# TYPE y_total counter",
      'y_total{tool="say \\"hi\\"\\\\now"} 2',
      "# HELP z A z.",
      "# TYPE z gauge",
      "z 7",
      "",
    ]);
  });
});
