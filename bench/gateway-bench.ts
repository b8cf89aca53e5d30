/**
 * Gateway throughput and added latency (issue 9): a real gateway in its own process, the fake LLM
 * in another answering after 50 ms, and N concurrent clients here, each sending its requests one
 * after another in its own session (`session_id`), against `nanobot gateway` as the CLI ships it
 * (every request through the AgentLoop, default gate: 3 turns at once).
 *
 * Ideal throughput = min(clients, gate) / 50 ms. Latency is reported two ways: minus the 50 ms
 * (as the issue asks), and over the ideal latency — 50 ms × max(1, clients / gate), the time a
 * request must wait in a closed loop when the gate lets `gate` turns talk to the model at once —
 * which is what the gateway itself adds on top of the gate's queueing.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_DIR, cpuMsOf, peakRssMiB, startFakeLLMProcess, stopChild, waitForPort } from "./support/processes.js";
import { median, percentile, table } from "./support/stats.js";

const LLM_DELAY_MS = 50;

export interface GatewayVariant {
  name: string;
  /** Turns the processor runs at once; Infinity = no gate. */
  gate: number;
  start(env: NodeJS.ProcessEnv, cwd: string): ChildProcess;
}

export const VARIANTS: GatewayVariant[] = [
  {
    // `nanobot gateway` as shipped: every request goes through the AgentLoop (default gate: 3 turns).
    name: "nanobot gateway",
    gate: 3,
    start: (env, cwd) => spawn(process.execPath, [join(REPO_DIR, "bin/nanobot.js"), "gateway", "--port", "0"], { cwd, env, stdio: ["ignore", "pipe", "pipe"] }),
  },
];

export interface GatewayRow {
  variant: string;
  clients: number;
  requests: number;
  failures: number;
  requestsPerSecond: number;
  idealPerSecond: number;
  percentOfIdeal: number;
  p50AddedMs: number;
  p99AddedMs: number;
  /** Latency − ideal latency (50 ms × max(1, clients / gate)): the gateway's cost beyond the gate's queueing. */
  p50OverIdealMs: number;
  p99OverIdealMs: number;
  peakRssMiB: number;
  /** Gateway process CPU (user + system) per answered request, ms: robust on a busy machine. */
  cpuMsPerRequest: number;
}

export interface GatewayBenchOptions {
  clients: number[];
  requestsPerClient: number;
  /** Requests per client for the gated variant (it queues: 200 × 20 at 60/s is over a minute). */
  gatedRequestsPerClient?: number;
  runs: number;
}

export const GATEWAY_FULL: GatewayBenchOptions = { clients: [1, 50, 200], requestsPerClient: 20, gatedRequestsPerClient: 5, runs: 3 };
export const GATEWAY_QUICK: GatewayBenchOptions = { clients: [1, 50, 200], requestsPerClient: 3, gatedRequestsPerClient: 1, runs: 1 };

async function load(baseURL: string, clients: number, perClient: number, tag: string): Promise<{ latencies: number[]; failures: number; wallMs: number }> {
  const latencies: number[] = [];
  let failures = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < perClient; i++) {
        const start = performance.now();
        try {
          const res = await fetch(`${baseURL}/v1/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: `hello ${i}` }], session_id: `${tag}-c${c}` }),
          });
          const body = (await res.json()) as { choices?: { message?: { content?: string } }[] };
          if (!res.ok || !body.choices?.[0]?.message?.content) failures++;
          else latencies.push(performance.now() - start);
        } catch {
          failures++;
        }
      }
    }),
  );
  return { latencies, failures, wallMs: performance.now() - t0 };
}

export interface GatewayBenchResult {
  rows: GatewayRow[];
  errors: string[];
}

export async function runGatewayBench(options: GatewayBenchOptions, log: (line: string) => void = () => undefined): Promise<GatewayBenchResult> {
  const fake = await startFakeLLMProcess(LLM_DELAY_MS);
  const dir = mkdtempSync(join(tmpdir(), "nanobot-bench-gateway-"));
  const rows: GatewayRow[] = [];
  const errors: string[] = [];
  try {
    const configPath = join(dir, "config.json");
    writeFileSync(
      configPath,
      JSON.stringify({ providers: { custom: { apiBase: fake.baseURL, apiKey: "bench" } }, agents: { defaults: { model: "custom/bench-chat", workspace: join(dir, "workspace") } } }),
    );
    for (const variant of VARIANTS) {
      for (const clients of options.clients) {
        const perClient = Number.isFinite(variant.gate) ? (options.gatedRequestsPerClient ?? options.requestsPerClient) : options.requestsPerClient;
        log(`gateway: ${variant.name}, ${clients} clients × ${perClient} requests × ${options.runs} runs …`);
        try {
          const perRun: GatewayRow[] = [];
          for (let run = 0; run < options.runs; run++) {
            // A fresh gateway and state database per run, so the peak RSS is this load's.
            const env = { ...process.env, HOME: dir, NANOBOT_HOME: join(dir, `home-${rows.length}-${run}`), NANOBOT_CONFIG: configPath, NO_COLOR: "1" };
            perRun.push(await measureOnce(variant, env, dir, clients, perClient, `r${run}`));
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
  return { rows, errors };
}

async function measureOnce(variant: GatewayVariant, env: NodeJS.ProcessEnv, cwd: string, clients: number, perClient: number, tag: string): Promise<GatewayRow> {
  const child = variant.start(env, cwd);
  try {
    const port = await waitForPort(child, variant.name);
    const baseURL = `http://127.0.0.1:${port}`;
    // Warm-up (JIT, first SQLite writes) in sessions of their own; not measured.
    const warm = await load(baseURL, Math.min(clients, 10), 3, `${tag}-warm`);
    if (warm.failures > 0) throw new Error(`${variant.name} failed its warm-up requests`);
    const cpu0 = cpuMsOf(child.pid!);
    const { latencies, failures, wallMs } = await load(baseURL, clients, perClient, tag);
    const cpuMsPerRequest = (cpuMsOf(child.pid!) - cpu0) / Math.max(1, latencies.length);
    const ideal = Math.min(clients, variant.gate) / (LLM_DELAY_MS / 1000);
    const idealLatencyMs = LLM_DELAY_MS * Math.max(1, clients / variant.gate);
    const rps = latencies.length / (wallMs / 1000);
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
      p50OverIdealMs: percentile(latencies, 50) - idealLatencyMs,
      p99OverIdealMs: percentile(latencies, 99) - idealLatencyMs,
      peakRssMiB: peakRssMiB(child.pid!),
      cpuMsPerRequest,
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
    p50OverIdealMs: pick((r) => r.p50OverIdealMs),
    p99OverIdealMs: pick((r) => r.p99OverIdealMs),
    peakRssMiB: pick((r) => r.peakRssMiB),
    cpuMsPerRequest: pick((r) => r.cpuMsPerRequest),
  };
}

export function formatGatewayBench({ rows, errors }: GatewayBenchResult): string {
  const failed = errors.length > 0 ? `errors:\n${errors.map((e) => `  ${e}`).join("\n")}\n` : "";
  return `${table(
    ["gateway", "clients", "requests", "fail", "req/s", "ideal", "% ideal", "p50 −50ms", "p99 −50ms", "p50 over ideal", "p99 over ideal", "CPU ms/req", "peak RSS MiB"],
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
      r.p50OverIdealMs.toFixed(1),
      r.p99OverIdealMs.toFixed(1),
      r.cpuMsPerRequest.toFixed(1),
      r.peakRssMiB.toFixed(0),
    ]),
  )}\n(median over runs; the fake LLM answers after ${LLM_DELAY_MS} ms; ideal = min(clients, gate) / ${LLM_DELAY_MS} ms;\n over ideal = latency − ${LLM_DELAY_MS} ms × max(1, clients / gate), i.e. beyond the gate's queueing;\n CPU ms/req = the gateway process's user+system CPU over the measured requests)\n${failed}`;
}
