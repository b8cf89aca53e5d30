/**
 * `npm run bench -- --only=cluster` (issue #24): several `nanobot gateway` workers on one
 * PostgreSQL against one worker on SQLite, with the same fake LLM (its own process, answering
 * 50 ms after each request). C clients each hold one session and send T turns one after another;
 * client c talks to worker c mod N (a load balancer with session affinity). Reported: requests/s,
 * latency p50/p99 (minus the model's 50 ms), failures, and the workers' CPU per request.
 *
 * Every worker has the default gate of 3 turns talking to the model at once, so the ideal rate
 * is min(C, 3·N) / 50 ms: more workers raise the ceiling; the store decides how close each gets.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LLM_DELAY_MS, load } from "./gateway-bench.js";
import { scratchDatabase } from "./support/postgres.js";
import { REPO_DIR, cpuMsOf, startFakeLLMProcess, stopChild, waitForPort } from "./support/processes.js";
import { percentile, table } from "./support/stats.js";

const GATE = 3;
/** `store.maxLeaseConnections` of the PostgreSQL workers. */
const MAX_LEASE_CONNECTIONS = 16;

export interface ClusterBenchOptions {
  clients: number[];
  turnsPerSession: number;
  workers: number[];
}

export const CLUSTER_FULL: ClusterBenchOptions = { clients: [50, 200], turnsPerSession: 20, workers: [1, 2, 3] };
export const CLUSTER_QUICK: ClusterBenchOptions = { clients: [50], turnsPerSession: 3, workers: [1, 2] };

export interface ClusterRow {
  store: "SQLite" | "PostgreSQL";
  workers: number;
  clients: number;
  requests: number;
  failures: number;
  requestsPerSecond: number;
  idealPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuMsPerRequest: number;
}

export interface ClusterBenchResult {
  rows: ClusterRow[];
  errors: string[];
}

async function startWorkers(count: number, env: NodeJS.ProcessEnv, dir: string, tag: string): Promise<{ children: ChildProcess[]; urls: string[] }> {
  const children: ChildProcess[] = [];
  try {
    const urls: string[] = [];
    for (let i = 0; i < count; i++) {
      const child = spawn(process.execPath, [join(REPO_DIR, "bin/nanobot.js"), "gateway", "--port", "0"], {
        cwd: dir,
        env: { ...env, NANOBOT_HOME: join(dir, `${tag}-worker-${i}`) },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(child);
      urls.push(`http://127.0.0.1:${await waitForPort(child, `worker ${i}`)}`);
    }
    return { children, urls };
  } catch (err) {
    await Promise.all(children.map(stopChild));
    throw err;
  }
}

async function measure(
  store: ClusterRow["store"],
  workers: number,
  clients: number,
  turns: number,
  env: NodeJS.ProcessEnv,
  dir: string,
  tag: string,
): Promise<ClusterRow> {
  const { children, urls } = await startWorkers(workers, env, dir, tag);
  try {
    const warm = await load(urls, Math.min(clients, 6 * workers), 2, `${tag}-warm`, 0);
    if (warm.failures > 0) throw new Error(`${store} × ${workers} failed its warm-up requests`);
    const cpu0 = children.map((c) => cpuMsOf(c.pid!));
    // Every turn is measured: the 20 turns of a session are the load, not a warm-up.
    const { samples, failures, answered, wallMs } = await load(urls, clients, turns, tag, 0);
    const cpu = children.reduce((sum, c, i) => sum + cpuMsOf(c.pid!) - cpu0[i]!, 0);
    const latencies = samples.map((s) => s.latencyMs);
    return {
      store,
      workers,
      clients,
      requests: clients * turns,
      failures,
      requestsPerSecond: answered / (wallMs / 1000),
      idealPerSecond: Math.min(clients, GATE * workers) / (LLM_DELAY_MS / 1000),
      p50Ms: percentile(latencies, 50) - LLM_DELAY_MS,
      p99Ms: percentile(latencies, 99) - LLM_DELAY_MS,
      cpuMsPerRequest: cpu / Math.max(1, answered),
    };
  } finally {
    await Promise.all(children.map(stopChild));
  }
}

export async function runClusterBench(options: ClusterBenchOptions, log: (line: string) => void = () => undefined): Promise<ClusterBenchResult> {
  const fake = await startFakeLLMProcess(LLM_DELAY_MS);
  const dir = mkdtempSync(join(tmpdir(), "nanobot-bench-cluster-"));
  const rows: ClusterRow[] = [];
  const errors: string[] = [];
  const configPath = join(dir, "config.json");
  const config = { providers: { custom: { apiBase: fake.baseURL, apiKey: "bench" } }, agents: { defaults: { model: "custom/bench-chat", workspace: join(dir, "workspace") } } };
  writeFileSync(configPath, JSON.stringify(config));
  // Three workers × (16 lease + 10 pool + 2) connections stay under PostgreSQL's default 100.
  const pgConfigPath = join(dir, "config-pg.json");
  writeFileSync(pgConfigPath, JSON.stringify({ ...config, store: { maxLeaseConnections: MAX_LEASE_CONNECTIONS } }));
  const base: NodeJS.ProcessEnv = { ...process.env, HOME: dir, NANOBOT_CONFIG: configPath, NO_COLOR: "1" };
  delete base["NANOBOT_STORE_URL"];
  const attempt = async (what: string, fn: () => Promise<ClusterRow>): Promise<void> => {
    log(`cluster: ${what} …`);
    try {
      rows.push(await fn());
    } catch (err) {
      const line = `${what}: ${err instanceof Error ? err.message.split("\n").slice(0, 4).join(" | ") : String(err)}`;
      errors.push(line);
      log(`  ! ${line}`);
    }
  };
  try {
    for (const clients of options.clients) {
      const turns = options.turnsPerSession;
      // SQLite is one machine's store: one worker (several processes on one file are not a cluster).
      await attempt(`SQLite, 1 worker, ${clients} clients × ${turns} turns`, () => measure("SQLite", 1, clients, turns, base, dir, `sqlite-${clients}`));
      for (const workers of options.workers) {
        await attempt(`PostgreSQL, ${workers} worker(s), ${clients} clients × ${turns} turns`, async () => {
          const db = await scratchDatabase();
          try {
            return await measure("PostgreSQL", workers, clients, turns, { ...base, NANOBOT_CONFIG: pgConfigPath, NANOBOT_STORE_URL: db.url }, dir, `pg-${workers}-${clients}`);
          } finally {
            await db.drop();
          }
        });
      }
    }
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return { rows, errors };
}

export function formatClusterBench({ rows, errors }: ClusterBenchResult): string {
  const failed = errors.length > 0 ? `errors:\n${errors.map((e) => `  ${e}`).join("\n")}\n` : "";
  return `${table(
    ["store", "workers", "clients", "requests", "fail", "req/s", "ideal", "p50 −50ms", "p99 −50ms", "CPU ms/req"],
    rows.map((r) => [
      r.store,
      String(r.workers),
      String(r.clients),
      String(r.requests),
      String(r.failures),
      r.requestsPerSecond.toFixed(1),
      r.idealPerSecond.toFixed(0),
      r.p50Ms.toFixed(1),
      r.p99Ms.toFixed(1),
      r.cpuMsPerRequest.toFixed(1),
    ]),
  )}\n(each client one session, its turns one after another, client c → worker c mod N; the fake LLM answers ${LLM_DELAY_MS} ms after a request\n arrives; ideal = min(clients, ${GATE} × workers) / ${LLM_DELAY_MS} ms (each worker lets ${GATE} turns talk to the model at once);\n −50ms = latency − ${LLM_DELAY_MS} ms, mostly the gates' queues; CPU ms/req = all workers' user+system CPU per request;\n PostgreSQL workers run with store.maxLeaseConnections ${MAX_LEASE_CONNECTIONS})\n${failed}`;
}
