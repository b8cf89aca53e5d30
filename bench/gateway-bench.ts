/**
 * Gateway throughput and added latency (issue 9): a real gateway in its own process, the fake LLM
 * in another answering 50 ms after each request arrives, and N concurrent clients here, each
 * sending its requests one after another in its own session (`session_id`), against
 * `nanobot gateway` as the CLI ships it (every request through the AgentLoop, default gate: 3
 * turns talking to the model at once).
 *
 * - Ideal throughput = min(clients, gate) / 50 ms.
 * - Latency minus the 50 ms, as the issue words it: at more clients than the gate lets in, this
 *   is mostly the gate's queue (50 clients through a gate of 3 wait ~800 ms in an ideal gateway).
 * - Added latency: what the gateway adds beyond the model's 50 ms per call and the wait for the
 *   gate — latency − gate wait − 50 ms × model calls, both read from the `Server-Timing` header
 *   the gateway sends. It counts everything else: HTTP, the session store, the prompt, the
 *   provider call's own overhead, and every wait on the event loop.
 * - Steady state for latency: each client's first request (all clients arrive in the same
 *   millisecond) is sent but its latency is left out; throughput counts every request.
 * - Steady state for CPU: a gateway runs for days, so each fresh process is warmed first (see
 *   `warmUp`); the CPU its first 300 requests cost is reported in a column of its own.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { Agent, request } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_DIR, cpuMsOf, peakRssMiB, rssMiB, startFakeLLMProcess, stopChild, waitForPort } from "./support/processes.js";
import type { FakeLLM } from "./support/processes.js";
import { median, percentile, table } from "./support/stats.js";

export const LLM_DELAY_MS = 50;

export interface GatewayVariant {
  name: string;
  /** Turns the processor lets talk to the model at once; Infinity = no gate. */
  gate: number;
  /** Serves `/metrics` with the process series (event-loop busy time, GC pauses). */
  metrics?: boolean;
  start(env: NodeJS.ProcessEnv, cwd: string): ChildProcess;
}

export const VARIANTS: GatewayVariant[] = [
  {
    // `nanobot gateway` as shipped: every request goes through the AgentLoop (default gate: 3 turns).
    name: "nanobot gateway",
    gate: 3,
    metrics: true,
    start: (env, cwd) => spawn(process.execPath, [join(REPO_DIR, "bin/nanobot.js"), "gateway", "--port", "0"], { cwd, env, stdio: ["ignore", "pipe", "pipe"] }),
  },
  {
    // The floor: HTTP in, a gate of 3, one streamed provider call of the same size class, HTTP out;
    // nothing else (support/minimal-relay.ts). What it adds is the machine's and the harness's.
    name: "floor: minimal relay",
    gate: 3,
    start: (env) =>
      spawn(process.execPath, ["--import", "tsx", join(REPO_DIR, "bench/support/minimal-relay.ts")], { cwd: REPO_DIR, env, stdio: ["ignore", "pipe", "pipe"] }),
  },
];

/**
 * What every fresh gateway answers before the measured load, in sessions of its own: `first`
 * at the model's 50 ms (its CPU per request is the `CPU first 300` column: a just-started
 * gateway), then `settle` with the fake answering at once, so that V8 has optimised the request
 * path. Measured in session 13 at 50 clients: after 300 requests V8's compiler threads still
 * cost ~0.7 ms per request (TurboFan reaching functions run once or twice per request), after
 * ~4,500 ~0.1 ms. Until session 13 the warm-up was min(clients, 10) × 3 requests.
 */
export const WARMUP = { first: { clients: 10, perClient: 30 }, settle: { clients: 50, perClient: 84 } } as const;
export const WARMUP_FIRST = WARMUP.first.clients * WARMUP.first.perClient;
export const WARMUP_REQUESTS = WARMUP_FIRST + WARMUP.settle.clients * WARMUP.settle.perClient;

/**
 * Warms the gateway at `baseURL` (process `pid`) against `fake`, which answers after
 * `LLM_DELAY_MS` again afterwards; throws if any request failed. Returns the first requests'
 * CPU per request, ms.
 */
export async function warmUp(baseURL: string, pid: number, fake: FakeLLM, tag: string): Promise<number> {
  const started = cpuMsOf(pid);
  const first = await load(baseURL, WARMUP.first.clients, WARMUP.first.perClient, `${tag}-warm`, 0);
  const firstCpuMsPerRequest = (cpuMsOf(pid) - started) / Math.max(1, first.answered);
  await fake.reset(0);
  let settle: LoadResult;
  try {
    settle = await load(baseURL, WARMUP.settle.clients, WARMUP.settle.perClient, `${tag}-settle`, 0);
  } finally {
    await fake.reset(LLM_DELAY_MS);
  }
  const failures = first.failures + settle.failures;
  if (failures > 0) throw new Error(`${failures} of the ${WARMUP_REQUESTS} warm-up requests failed`);
  return firstCpuMsPerRequest;
}

export interface GatewayRow {
  variant: string;
  clients: number;
  requests: number;
  failures: number;
  requestsPerSecond: number;
  idealPerSecond: number;
  percentOfIdeal: number;
  /** Latency − 50 ms. */
  p50AddedMs: number;
  p99AddedMs: number;
  /** Latency − gate wait − 50 ms per model call: the gateway's own cost (see the header). */
  p50GatewayMs: number;
  p99GatewayMs: number;
  peakRssMiB: number;
  /** Where the added time went, p50 and p99 each (see `splitAdded`). */
  split: Record<"inside" | "model" | "outside", [p50: number, p99: number]>;
  /** From the gateway's own `/metrics` around the measured load (the floor serves none). */
  runtime?: RuntimeShare;
  /** Gateway process CPU (user + system) per answered request, ms: robust on a busy machine. */
  cpuMsPerRequest: number;
  /** The same over the fresh process's first `WARMUP_FIRST` requests (start-up not included). */
  warmupCpuMsPerRequest: number;
}

export interface GatewayBenchOptions {
  clients: number[];
  /** Measured requests per client, after its first (unmeasured) one. */
  requestsPerClient: number;
  /**
   * Measured requests per run at least (each client sends more when `clients × requestsPerClient`
   * falls short): a p99 needs ~100 samples or more to be one. At one client, 20 requests made the
   * "p99" the slowest of 20, so one late read of the model's answer set the figure.
   */
  minRequestsPerRun: number;
  runs: number;
  /** Fresh starts of the shipped gateway for the start-up row. */
  startRuns: number;
}

export const GATEWAY_FULL: GatewayBenchOptions = { clients: [1, 50, 200], requestsPerClient: 20, minRequestsPerRun: 200, runs: 3, startRuns: 7 };
export const GATEWAY_QUICK: GatewayBenchOptions = { clients: [1, 50, 200], requestsPerClient: 2, minRequestsPerRun: 0, runs: 1, startRuns: 2 };

export interface Sample {
  latencyMs: number;
  /** Latency − gate wait − 50 ms × model calls, from `Server-Timing`. */
  gatewayMs: number;
  /** `gatewayMs` in three parts (see `splitAdded`). */
  insideMs: number;
  modelBeyondMs: number;
  outsideMs: number;
}

/**
 * The added time in three parts, from `Server-Timing`: `inside` the gateway's clock but outside
 * the gate and the model calls (store, prompt, turn); the model calls' time `beyond` 50 ms each
 * (building and sending the request, reading the answer, and any wait for the event loop when
 * it arrives); `outside` the gateway's clock (HTTP on both ends, the client's own event loop).
 */
export function splitAdded(latencyMs: number, header: string | null, modelDelayMs = LLM_DELAY_MS): Pick<Sample, "insideMs" | "modelBeyondMs" | "outsideMs"> {
  const dur = (name: string) => Number(new RegExp(`(?:^|, )${name};dur=([\\d.]+)`).exec(header ?? "")?.[1]);
  const calls = Number(/(?:^|, )model;dur=[\d.]+;desc="(\d+) call/.exec(header ?? "")?.[1]);
  const [gate, model, total] = [dur("gate"), dur("model"), dur("total")];
  if (![gate, model, total, calls].every(Number.isFinite)) throw new Error(`the gateway sent no usable Server-Timing header: ${String(header)}`);
  return { insideMs: total - gate - model, modelBeyondMs: model - modelDelayMs * calls, outsideMs: latencyMs - total };
}

/** Event-loop busy time and GC pauses per measured request, from two scrapes of `/metrics`. */
export interface RuntimeShare {
  loopBusyMsPerRequest: number;
  gcMsPerRequest: number;
  /** Young-generation collections per 100 requests, and their mean pause. */
  minorGcPer100: number;
  minorGcMeanMs: number;
}

async function scrapeMetrics(baseURL: string): Promise<Map<string, number>> {
  const res = await fetch(`${baseURL}/metrics`);
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}`);
  const values = new Map<string, number>();
  for (const line of (await res.text()).split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    values.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return values;
}

function runtimeShare(before: Map<string, number>, after: Map<string, number>, requests: number): RuntimeShare {
  const delta = (series: string) => (after.get(series) ?? 0) - (before.get(series) ?? 0);
  let gcSeconds = 0;
  for (const series of after.keys()) if (series.startsWith("nodejs_gc_duration_seconds_sum")) gcSeconds += delta(series);
  const minor = delta('nodejs_gc_duration_seconds_count{kind="minor"}');
  return {
    loopBusyMsPerRequest: (delta("nodejs_eventloop_busy_seconds_total") * 1000) / requests,
    gcMsPerRequest: (gcSeconds * 1000) / requests,
    minorGcPer100: (minor * 100) / requests,
    minorGcMeanMs: minor > 0 ? (delta('nodejs_gc_duration_seconds_sum{kind="minor"}') * 1000) / minor : 0,
  };
}

/** `gate;dur=…` and `model;dur=…;desc="N calls"` of a Server-Timing header; `modelDelayMs`: the fake's delay per call. */
export function gatewayShare(latencyMs: number, header: string | null, modelDelayMs = LLM_DELAY_MS): number {
  const gate = Number(/(?:^|, )gate;dur=([\d.]+)/.exec(header ?? "")?.[1]);
  const calls = Number(/(?:^|, )model;dur=[\d.]+;desc="(\d+) call/.exec(header ?? "")?.[1]);
  if (!Number.isFinite(gate) || !Number.isFinite(calls)) throw new Error(`the gateway sent no usable Server-Timing header: ${String(header)}`);
  return latencyMs - gate - modelDelayMs * calls;
}

export interface LoadResult {
  samples: Sample[];
  failures: number;
  /** Requests answered, measured or not. */
  answered: number;
  /** From the first request's start to the last one's end. */
  wallMs: number;
}

/** One keep-alive connection per client: node:http costs the load generator ~10× less CPU than fetch. */
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

interface Answer {
  status: number;
  serverTiming: string | null;
  body: string;
}

function post(url: string, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => {
        const timing = res.headers["server-timing"];
        resolve({ status: res.statusCode ?? 0, serverTiming: typeof timing === "string" ? timing : null, body: text });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * `clients` concurrent clients, each sending `unmeasured + perClient` requests one after another
 * in its own session. With several base URLs (workers), client c talks to worker c mod N, as a
 * load balancer with session affinity would spread them.
 */
export async function load(baseURLs: string | readonly string[], clients: number, perClient: number, tag: string, unmeasured = 1, modelDelayMs = LLM_DELAY_MS): Promise<LoadResult> {
  const urls = typeof baseURLs === "string" ? [baseURLs] : baseURLs;
  const samples: Sample[] = [];
  let failures = 0;
  let answered = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < unmeasured + perClient; i++) {
        const measured = i >= unmeasured;
        const start = performance.now();
        try {
          const res = await post(
            `${urls[c % urls.length]!}/v1/chat/completions`,
            JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: `hello ${i}` }], session_id: `${tag}-c${c}` }),
          );
          const end = performance.now();
          const body = JSON.parse(res.body) as { choices?: { message?: { content?: string } }[] };
          const ok = res.status === 200 && Boolean(body.choices?.[0]?.message?.content);
          if (ok) answered++;
          if (!measured) continue;
          if (!ok) failures++;
          else samples.push({ latencyMs: end - start, gatewayMs: gatewayShare(end - start, res.serverTiming, modelDelayMs), ...splitAdded(end - start, res.serverTiming, modelDelayMs) });
        } catch {
          failures++;
        }
      }
    }),
  );
  return { samples, failures, answered, wallMs: performance.now() - t0 };
}

/** `nanobot gateway` started afresh with the bench's config (no channels, no MCP servers). */
export interface GatewayStartRow {
  runs: number;
  /** Spawned → "listening on" printed, ms. */
  listenMs: number[];
  /** Resident memory one second after that, before any request, MiB. */
  idleRssMiB: number[];
}

export interface GatewayBenchResult {
  rows: GatewayRow[];
  start?: GatewayStartRow;
  errors: string[];
}

/** How long after listening the idle RSS is read: the start's own work (the sandbox probe's answer, timers) is done by then. */
const IDLE_SETTLE_MS = 1_000;

/** Starts the shipped gateway `runs` times, one after another, each with a fresh state database. */
export async function measureGatewayStart(variant: GatewayVariant, env: (run: number) => NodeJS.ProcessEnv, cwd: string, runs: number): Promise<GatewayStartRow> {
  const row: GatewayStartRow = { runs, listenMs: [], idleRssMiB: [] };
  for (let run = 0; run < runs; run++) {
    const t0 = performance.now();
    const child = variant.start(env(run), cwd);
    try {
      await waitForPort(child, variant.name);
      row.listenMs.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
      row.idleRssMiB.push(rssMiB(child.pid!));
    } finally {
      await stopChild(child);
    }
  }
  return row;
}

export async function runGatewayBench(options: GatewayBenchOptions, log: (line: string) => void = () => undefined): Promise<GatewayBenchResult> {
  const fake = await startFakeLLMProcess(LLM_DELAY_MS);
  const dir = mkdtempSync(join(tmpdir(), "nanobot-bench-gateway-"));
  const rows: GatewayRow[] = [];
  const errors: string[] = [];
  let start: GatewayStartRow | undefined;
  try {
    const configPath = join(dir, "config.json");
    writeFileSync(
      configPath,
      JSON.stringify({ providers: { custom: { apiBase: fake.baseURL, apiKey: "bench" } }, agents: { defaults: { model: "custom/bench-chat", workspace: join(dir, "workspace") } } }),
    );
    log(`gateway: ${VARIANTS[0]!.name}, start-up × ${options.startRuns} …`);
    start = await measureGatewayStart(
      VARIANTS[0]!,
      (run) => ({ ...process.env, HOME: dir, NANOBOT_HOME: join(dir, `home-start-${run}`), NANOBOT_CONFIG: configPath, NO_COLOR: "1" }),
      dir,
      options.startRuns,
    ).catch((err: unknown) => {
      errors.push(`start-up: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
      return undefined;
    });
    for (const variant of VARIANTS) {
      for (const clients of options.clients) {
        const perClient = Math.max(options.requestsPerClient, Math.ceil(options.minRequestsPerRun / clients));
        log(`gateway: ${variant.name}, ${clients} clients × ${perClient} requests × ${options.runs} runs …`);
        try {
          const perRun: GatewayRow[] = [];
          for (let run = 0; run < options.runs; run++) {
            // A fresh gateway and state database per run, so the peak RSS is this load's.
            const env = { ...process.env, HOME: dir, NANOBOT_HOME: join(dir, `home-${rows.length}-${run}`), NANOBOT_CONFIG: configPath, NO_COLOR: "1" };
            perRun.push(await measureOnce(variant, env, dir, fake, clients, perClient, `r${run}`));
          }
          rows.push(medianRow(perRun));
        } catch (err) {
          const line = `${variant.name}, ${clients} clients: ${err instanceof Error ? err.message.split("\n").slice(0, 4).join(" | ") : String(err)}`;
          errors.push(line);
          log(`  ! ${line}`);
          break;
        }
      }
    }
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { rows, start, errors };
}

async function measureOnce(variant: GatewayVariant, env: NodeJS.ProcessEnv, cwd: string, fake: FakeLLM, clients: number, perClient: number, tag: string): Promise<GatewayRow> {
  const child = variant.start(env, cwd);
  try {
    const port = await waitForPort(child, variant.name);
    const baseURL = `http://127.0.0.1:${port}`;
    // Warm-up (JIT, first SQLite writes) in sessions of their own; its first requests' CPU is reported apart.
    const warmupCpuMsPerRequest = await warmUp(baseURL, child.pid!, fake, tag).catch((err: Error) => {
      throw new Error(`${variant.name}: ${err.message}`);
    });
    const metrics0 = variant.metrics ? await scrapeMetrics(baseURL) : undefined;
    const cpu0 = cpuMsOf(child.pid!);
    const { samples, failures, answered, wallMs } = await load(baseURL, clients, perClient, tag);
    const cpuMsPerRequest = (cpuMsOf(child.pid!) - cpu0) / Math.max(1, answered);
    const runtime = metrics0 ? runtimeShare(metrics0, await scrapeMetrics(baseURL), Math.max(1, answered)) : undefined;
    const p50p99 = (pick: (s: Sample) => number): [number, number] => {
      const values = samples.map(pick);
      return [percentile(values, 50), percentile(values, 99)];
    };
    const ideal = Math.min(clients, variant.gate) / (LLM_DELAY_MS / 1000);
    // Every answered request counts for throughput; only the latencies leave out the first ones.
    const rps = answered / (wallMs / 1000);
    const latencies = samples.map((s) => s.latencyMs);
    const gatewayMs = samples.map((s) => s.gatewayMs);
    return {
      variant: variant.name,
      clients,
      requests: clients * perClient,
      failures,
      requestsPerSecond: rps,
      idealPerSecond: ideal,
      percentOfIdeal: (rps / ideal) * 100,
      p50AddedMs: percentile(latencies, 50) - LLM_DELAY_MS,
      p99AddedMs: percentile(latencies, 99) - LLM_DELAY_MS,
      p50GatewayMs: percentile(gatewayMs, 50),
      p99GatewayMs: percentile(gatewayMs, 99),
      split: { inside: p50p99((s) => s.insideMs), model: p50p99((s) => s.modelBeyondMs), outside: p50p99((s) => s.outsideMs) },
      ...(runtime ? { runtime } : {}),
      peakRssMiB: peakRssMiB(child.pid!),
      cpuMsPerRequest,
      warmupCpuMsPerRequest,
    };
  } finally {
    await stopChild(child);
  }
}

/** The median of each figure over runs (failures summed). */
function medianRow(perRun: GatewayRow[]): GatewayRow {
  const first = perRun[0]!;
  const pick = (f: (r: GatewayRow) => number) => median(perRun.map(f));
  return {
    ...first,
    failures: perRun.reduce((n, r) => n + r.failures, 0),
    requestsPerSecond: pick((r) => r.requestsPerSecond),
    percentOfIdeal: pick((r) => r.percentOfIdeal),
    p50AddedMs: pick((r) => r.p50AddedMs),
    p99AddedMs: pick((r) => r.p99AddedMs),
    p50GatewayMs: pick((r) => r.p50GatewayMs),
    p99GatewayMs: pick((r) => r.p99GatewayMs),
    split: {
      inside: [pick((r) => r.split.inside[0]), pick((r) => r.split.inside[1])],
      model: [pick((r) => r.split.model[0]), pick((r) => r.split.model[1])],
      outside: [pick((r) => r.split.outside[0]), pick((r) => r.split.outside[1])],
    },
    ...(first.runtime
      ? {
          runtime: {
            loopBusyMsPerRequest: pick((r) => r.runtime?.loopBusyMsPerRequest ?? Number.NaN),
            gcMsPerRequest: pick((r) => r.runtime?.gcMsPerRequest ?? Number.NaN),
            minorGcPer100: pick((r) => r.runtime?.minorGcPer100 ?? Number.NaN),
            minorGcMeanMs: pick((r) => r.runtime?.minorGcMeanMs ?? Number.NaN),
          },
        }
      : {}),
    peakRssMiB: pick((r) => r.peakRssMiB),
    warmupCpuMsPerRequest: pick((r) => r.warmupCpuMsPerRequest),
    cpuMsPerRequest: pick((r) => r.cpuMsPerRequest),
  };
}

export function formatGatewayBench({ rows, start, errors }: GatewayBenchResult): string {
  const failed = errors.length > 0 ? `errors:\n${errors.map((e) => `  ${e}`).join("\n")}\n` : "";
  const range = (values: number[], digits: number) => `${median(values).toFixed(digits)} (${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)})`;
  const startLine = start
    ? `start-up (${VARIANTS[0]!.name}, no channels or MCP servers, ${start.runs} fresh starts): listening after ${range(start.listenMs, 0)} ms, idle RSS ${range(start.idleRssMiB, 1)} MiB\n\n`
    : "";
  return `${startLine}${table(
    ["gateway", "clients", "requests", "fail", "req/s", "ideal", "% ideal", "p50 −50ms", "p99 −50ms", "p50 added", "p99 added", "CPU ms/req", `CPU first ${WARMUP_FIRST}`, "peak RSS MiB"],
    rows.map((r) => [
      r.variant,
      String(r.clients),
      String(r.requests),
      String(r.failures),
      r.requestsPerSecond.toFixed(1),
      r.idealPerSecond.toFixed(0),
      `${r.percentOfIdeal.toFixed(1)} %`,
      r.p50AddedMs.toFixed(1),
      r.p99AddedMs.toFixed(1),
      r.p50GatewayMs.toFixed(1),
      r.p99GatewayMs.toFixed(1),
      r.cpuMsPerRequest.toFixed(1),
      r.warmupCpuMsPerRequest.toFixed(1),
      r.peakRssMiB.toFixed(0),
    ]),
  )}\n(median over runs; latencies leave out each client's first request (the burst); the fake LLM answers ${LLM_DELAY_MS} ms\n after a request arrives; ideal = min(clients, gate) / ${LLM_DELAY_MS} ms; −${LLM_DELAY_MS}ms = latency − ${LLM_DELAY_MS} ms, mostly the gate's queue past 3 clients;\n added = latency − gate wait − ${LLM_DELAY_MS} ms per model call (Server-Timing): what the gateway itself adds;\n CPU ms/req = the gateway process's user+system CPU per measured request, after ${WARMUP_REQUESTS} warm-up requests;\n CPU first ${WARMUP_FIRST} = the same over the fresh process's first ${WARMUP_FIRST} requests)\n\n${formatSplit(rows)}${failed}`;
}

/** Where the added time went, and the gateway's event loop and GC per request. */
function formatSplit(rows: GatewayRow[]): string {
  const pair = ([p50, p99]: [number, number]) => `${p50.toFixed(1)} / ${p99.toFixed(1)}`;
  const figure = (value: number | undefined, digits = 2) => (value === undefined || !Number.isFinite(value) ? "—" : value.toFixed(digits));
  return `${table(
    ["gateway", "clients", "inside p50 / p99", "model beyond p50 / p99", "outside p50 / p99", "loop busy ms/req", "GC ms/req", "minor GCs /100 req", "minor GC mean ms"],
    rows.map((r) => [
      r.variant,
      String(r.clients),
      pair(r.split.inside),
      pair(r.split.model),
      pair(r.split.outside),
      figure(r.runtime?.loopBusyMsPerRequest),
      figure(r.runtime?.gcMsPerRequest),
      figure(r.runtime?.minorGcPer100, 1),
      figure(r.runtime?.minorGcMeanMs, 1),
    ]),
  )}\n(added time in three parts, from Server-Timing: inside = the gateway's clock less the gate and the model calls (store,\n prompt, turn); model beyond = model time − ${LLM_DELAY_MS} ms per call (the request's build and send, the answer's read, and any wait\n for the event loop when it arrives); outside = latency − the gateway's clock (HTTP both ends, the client's event loop).\n The parts' percentiles do not add up to the added time's. Loop busy and GC from the gateway's /metrics around the load.)\n`;
}
