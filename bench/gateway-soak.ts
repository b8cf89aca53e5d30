/**
 * `nanobot gateway` over a long run: rounds of 50 clients × 40 requests at once, each round in
 * sessions of its own (so the sessions add up, as a gateway's do over days), the model answering
 * at once. After the first round and the last it reads the gateway's live heap (a full GC first,
 * through support/heap-probe.mjs) and RSS: what the gateway keeps grows with what it has served
 * only up to its caches' bounds.
 *
 *   npm run bench -- --only=gateway-soak [--quick]
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { load } from "./gateway-bench.js";
import { BENCH_DIR, REPO_DIR, peakRssMiB, rssMiB, startFakeLLMProcess, stopChild, waitForPort } from "./support/processes.js";
import { table } from "./support/stats.js";

export interface SoakOptions {
  rounds: number;
  clients: number;
  perClient: number;
}

export const SOAK_FULL: SoakOptions = { rounds: 12, clients: 50, perClient: 40 };
export const SOAK_QUICK: SoakOptions = { rounds: 3, clients: 50, perClient: 10 };

export interface SoakPoint {
  round: number;
  requests: number;
  sessions: number;
  failures: number;
  /** Heap in use right after a full GC, MiB. */
  liveHeapMiB: number;
  rssMiB: number;
}

export interface SoakResult {
  options: SoakOptions;
  points: SoakPoint[];
  peakRssMiB: number;
}

const MiB = 2 ** 20;

/** Asks the probe for the live heap and waits for its answer. */
async function liveHeapMiB(pid: number, file: string): Promise<number> {
  rmSync(file, { force: true });
  process.kill(pid, "SIGUSR2");
  for (let i = 0; i < 200; i++) {
    try {
      return (JSON.parse(readFileSync(file, "utf8")) as { heapUsed: number }).heapUsed / MiB;
    } catch {
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  throw new Error("the gateway's heap probe did not answer");
}

export async function runGatewaySoak(options: SoakOptions, log: (line: string) => void = () => undefined): Promise<SoakResult> {
  const fake = await startFakeLLMProcess(0);
  const dir = mkdtempSync(join(tmpdir(), "nanobot-bench-soak-"));
  const configPath = join(dir, "config.json");
  const heapFile = join(dir, "heap.json");
  writeFileSync(configPath, JSON.stringify({ providers: { custom: { apiBase: fake.baseURL, apiKey: "bench" } }, agents: { defaults: { model: "custom/bench-chat", workspace: join(dir, "workspace") } } }));
  const env = { ...process.env, HOME: dir, NANOBOT_HOME: join(dir, "home"), NANOBOT_CONFIG: configPath, NO_COLOR: "1", NANOBOT_BENCH_HEAP_FILE: heapFile };
  const probe = join(BENCH_DIR, "support/heap-probe.mjs");
  const child = spawn(process.execPath, ["--expose-gc", "--import", probe, join(REPO_DIR, "bin/nanobot.js"), "gateway", "--port", "0"], { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
  const points: SoakPoint[] = [];
  try {
    const base = `http://127.0.0.1:${await waitForPort(child, "nanobot gateway")}`;
    let requests = 0;
    let failures = 0;
    for (let round = 1; round <= options.rounds; round++) {
      log(`gateway soak: round ${round} of ${options.rounds} (${options.clients} clients × ${options.perClient} requests, new sessions) …`);
      const result = await load(base, options.clients, options.perClient, `soak${round}`, 0, 0);
      requests += result.answered;
      failures += result.failures;
      if (round === 1 || round === options.rounds) {
        points.push({ round, requests, sessions: round * options.clients, failures, liveHeapMiB: await liveHeapMiB(child.pid!, heapFile), rssMiB: rssMiB(child.pid!) });
      }
    }
    return { options, points, peakRssMiB: peakRssMiB(child.pid!) };
  } finally {
    await stopChild(child);
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function formatGatewaySoak({ options, points, peakRssMiB: peak }: SoakResult): string {
  return `${table(
    ["after round", "requests", "sessions", "failed", "live heap MiB", "RSS MiB"],
    points.map((p) => [String(p.round), String(p.requests), String(p.sessions), String(p.failures), p.liveHeapMiB.toFixed(1), p.rssMiB.toFixed(0)]),
  )}\n(nanobot gateway, ${options.rounds} rounds of ${options.clients} clients × ${options.perClient} requests, each round in new sessions, the fake LLM answering at once;\n live heap = heap in use after a full GC; peak RSS over the run ${peak.toFixed(0)} MiB)\n`;
}
