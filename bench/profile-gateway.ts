/**
 * Profiles and measures `nanobot gateway` under the gateway bench's load (issue 25): a real
 * gateway process, the fake LLM answering 50 ms after each request, C clients each sending its
 * requests one after another in its own session.
 *
 *   npx tsx bench/profile-gateway.ts [--clients=50] [--requests=20] [--out=bench/profiles/gateway-50]
 *   npx tsx bench/profile-gateway.ts --no-profile --ab=/tmp/base [--rounds=3] [--clients=1,50]
 *   npx tsx bench/profile-gateway.ts --no-profile --llm-delay=0,5,20,50 [--floor] [--clients=1] [--requests=150]
 *
 * Profile mode: the gateway runs with `support/profile-on-signal.mjs` preloaded, and the V8
 * sampling profiler runs around the measured requests only (start-up and warm-up left out);
 * writes `<out>.md` (top functions by self and total time, per request) and `<out>.cpuprofile`.
 * `--ab=DIR`: A/B of two builds, interleaved round by round (DIR holds `bin/` and `dist/` of
 * the other build, `node_modules` linked): the gateway's CPU per request (its own process
 * CPU, /proc), p50/p99 added latency (`Server-Timing`, as the gateway bench), requests per
 * second and p50/p99 latency less the model's delay (a change can lower the added latency by
 * moving time into the gate's queue; these show it), and the medians.
 * `--llm-delay=D1,D2,…`: one warmed process per round measures the same load with the fake
 * answering after each delay in turn (the order reversed every other round), so the cost of the
 * same work after the process slept D ms shows; `--floor` measures the minimal relay instead.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { Profiler } from "node:inspector";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { LLM_DELAY_MS, VARIANTS, WARMUP_REQUESTS, load, warmUp } from "./gateway-bench.js";
import { mainThreadCpuMs } from "./support/proc-cpu.js";
import { REPO_DIR, cpuMsOf, startFakeLLMProcess, stopChild, waitForPort } from "./support/processes.js";
import type { FakeLLM } from "./support/processes.js";
import { costTable, summarise, summariseHeap } from "./support/profile-summary.js";
import type { HeapProfileNode } from "./support/profile-summary.js";
import { median, percentile } from "./support/stats.js";
import { arg } from "./support/args.js";

const clientCounts = arg("clients", "50").split(",").map(Number);
const perClient = Number(arg("requests", "20"));
const profile = !process.argv.includes("--no-profile");
const heap = process.argv.includes("--heap");
const other = process.argv.some((a) => a.startsWith("--ab=")) ? resolve(arg("ab", "")) : null;
const rounds = Number(arg("rounds", other ? "3" : "1"));
const delays = arg("llm-delay", String(LLM_DELAY_MS)).split(",").map(Number);
const floor = process.argv.includes("--floor");
if (profile && delays.length > 1) throw new Error("--llm-delay with several delays measures CPU only: add --no-profile");
if (floor && (profile || other)) throw new Error("--floor measures the minimal relay: add --no-profile, without --ab");
const PRELOAD = join(REPO_DIR, "bench/support/profile-on-signal.mjs");

interface Measured {
  cpuMsPerRequest: number;
  /** The process's main thread (its JavaScript, and the syscalls it makes) per request. */
  mainThreadMsPerRequest: number;
  p50AddedMs: number;
  p99AddedMs: number;
  /** Answered requests per second over the load (each client's first request included). */
  reqPerSec: number;
  /** Latency less the model's delay, p50 and p99: mostly the gate's queue past its slots. */
  p50LatencyMs: number;
  p99LatencyMs: number;
  profile?: Profiler.Profile | { head: HeapProfileNode };
}

/** Resolves when `child` prints `line` on stderr. */
function stderrLine(child: ChildProcess, line: string): Promise<void> {
  return new Promise((done) => {
    let seen = "";
    const on = (d: Buffer) => {
      seen += d.toString();
      if (seen.includes(line)) {
        child.stderr?.off("data", on);
        done();
      }
    };
    child.stderr?.on("data", on);
  });
}

/** One warmed process measured at each of `delays` in turn (the fake's answer delay); one result per delay. */
async function measure(root: string, env: NodeJS.ProcessEnv, dir: string, fake: FakeLLM, clients: number, tag: string, delays: readonly number[]): Promise<Measured[]> {
  const profileOut = join(dir, `${tag}.profile`);
  const args = [...(profile ? ["--import", PRELOAD] : []), join(root, "bin/nanobot.js"), "gateway", "--port", "0"];
  const fullEnv = { ...env, NANOBOT_PROFILE_OUT: profileOut, ...(heap ? { NANOBOT_PROFILE_KIND: "heap" } : {}) };
  const child = floor ? VARIANTS.find((v) => v.name.startsWith("floor"))!.start(fullEnv, dir) : spawn(process.execPath, args, { cwd: dir, env: fullEnv, stdio: ["ignore", "pipe", "pipe"] });
  try {
    const baseURL = `http://127.0.0.1:${await waitForPort(child, "gateway")}`;
    await warmUp(baseURL, child.pid!, fake, tag);
    const out: Measured[] = [];
    for (const delay of delays) {
      await fake.reset(delay);
      try {
        out.push(await measureLoad(child, baseURL, clients, `${tag}-d${delay}`, delay, profileOut));
      } finally {
        await fake.reset(LLM_DELAY_MS);
      }
    }
    return out;
  } finally {
    await stopChild(child);
  }
}

/** The measured load on a warmed process, the fake answering after `delay` ms. */
async function measureLoad(child: ChildProcess, baseURL: string, clients: number, tag: string, delay: number, profileOut: string): Promise<Measured> {
  if (profile) {
    const started = stderrLine(child, "profile: started");
    child.kill("SIGUSR2");
    await started;
  }
  const cpu0 = cpuMsOf(child.pid!);
  const main0 = mainThreadCpuMs(child.pid!);
  const result = await load(baseURL, clients, perClient, tag, 1, delay);
  const cpuMsPerRequest = (cpuMsOf(child.pid!) - cpu0) / Math.max(1, result.answered);
  const mainThreadMsPerRequest = (mainThreadCpuMs(child.pid!) - main0) / Math.max(1, result.answered);
  if (result.failures > 0) throw new Error(`${result.failures} requests failed`);
  let p: Measured["profile"];
  if (profile) {
    const written = stderrLine(child, "profile: written");
    child.kill("SIGUSR2");
    await written;
    p = JSON.parse(readFileSync(profileOut, "utf8")) as Measured["profile"];
  }
  const added = result.samples.map((s) => s.gatewayMs);
  const latency = result.samples.map((s) => s.latencyMs - delay);
  return {
    cpuMsPerRequest,
    mainThreadMsPerRequest,
    p50AddedMs: percentile(added, 50),
    p99AddedMs: percentile(added, 99),
    reqPerSec: result.answered / (result.wallMs / 1000),
    p50LatencyMs: percentile(latency, 50),
    p99LatencyMs: percentile(latency, 99),
    ...(p ? { profile: p } : {}),
  };
}

function writeProfile(out: string, clients: number, m: Measured, requests: number): void {
  const kind = heap ? "heapprofile" : "cpuprofile";
  writeFileSync(`${out}.${kind}`, JSON.stringify(m.profile));
  const { costs, totalUs } = heap ? summariseHeap((m.profile as unknown as { head: HeapProfileNode }).head) : summarise(m.profile as Profiler.Profile);
  const what = heap
    ? [
        `\`npx tsx bench/profile-gateway.ts --heap --clients=${clients} --requests=${perClient}\`: the gateway process's sampling heap profiler`,
        `(every 4 KB allocated, collected objects kept) around the measured requests only. Sampled allocation per request:`,
        `${(totalUs / 1024 / requests).toFixed(0)} KB; ${m.cpuMsPerRequest.toFixed(2)} ms process CPU per request (profiler on); load average ${loadAverage()}.`,
      ]
    : [
        `\`npx tsx bench/profile-gateway.ts --clients=${clients} --requests=${perClient}\`: the gateway process, sampled every 200 µs`,
        `around the measured requests only (after a warm-up of ${WARMUP_REQUESTS} requests). ${m.cpuMsPerRequest.toFixed(2)} ms process CPU per request`,
        `(with the profiler on), p50 / p99 added latency ${m.p50AddedMs.toFixed(1)} / ${m.p99AddedMs.toFixed(1)} ms; load average ${loadAverage()}.`,
        `Sampled time per request: ${(totalUs / 1000 / requests).toFixed(2)} ms (samples are wall time on a shared machine).`,
      ];
  writeFileSync(
    `${out}.md`,
    [
      `# nanobot gateway: ${clients} clients × ${perClient} requests${heap ? ", allocations" : ""}`,
      "",
      ...what,
      "",
      `## Top functions by self ${heap ? "allocation" : "time"}`,
      "",
      costTable(costs, "selfUs", totalUs, requests, 40, "req", heap),
      "",
      `## Top functions by total ${heap ? "allocation" : "time"} (inclusive)`,
      "",
      costTable(costs, "totalUs", totalUs, requests, 60, "req", heap),
      "",
    ].join("\n"),
  );
  process.stdout.write(`wrote ${out}.md and ${out}.${kind}\n`);
}

const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

async function main(): Promise<void> {
  const fake = await startFakeLLMProcess(LLM_DELAY_MS);
  const dir = mkdtempSync(join(tmpdir(), "nanobot-profile-gateway-"));
  const configPath = join(dir, "config.json");
  writeFileSync(
    configPath,
    JSON.stringify({ providers: { custom: { apiBase: fake.baseURL, apiKey: "bench" } }, agents: { defaults: { model: "custom/bench-chat", workspace: join(dir, "workspace") } } }),
  );
  const builds = other ? [{ name: "other", root: other }, { name: "this", root: REPO_DIR }] : [{ name: "this", root: REPO_DIR }];
  const results = new Map<string, Measured[]>();
  let n = 0;
  try {
    for (let round = 0; round < rounds; round++) {
      for (const clients of clientCounts) {
        for (const build of round % 2 === 0 ? builds : [...builds].reverse()) {
          const env = { ...process.env, HOME: dir, NANOBOT_HOME: join(dir, `home-${n++}`), NANOBOT_CONFIG: configPath, NO_COLOR: "1" };
          const order = round % 2 === 0 ? delays : [...delays].reverse();
          const measured = await measure(build.root, env, dir, fake, clients, `${build.name}-${clients}-${round}`, order);
          for (const [i, m] of measured.entries()) {
            const key = `${floor ? "floor" : build.name} @ ${clients}${delays.length > 1 || delays[0] !== LLM_DELAY_MS ? ` (model ${order[i]} ms)` : ""}`;
            results.set(key, [...(results.get(key) ?? []), m]);
            process.stdout.write(
              `round ${round + 1} ${key} clients: CPU ${m.cpuMsPerRequest.toFixed(2)} ms/req (main thread ${m.mainThreadMsPerRequest.toFixed(2)}), added p50 ${m.p50AddedMs.toFixed(1)} p99 ${m.p99AddedMs.toFixed(1)} ms, ${m.reqPerSec.toFixed(1)} req/s, latency −${order[i]}ms p50 ${m.p50LatencyMs.toFixed(1)} p99 ${m.p99LatencyMs.toFixed(1)} ms (load ${loadAverage()})\n`,
            );
            if (m.profile) writeProfile(arg("out", join("bench", "profiles", `gateway-${clients}${heap ? "-heap" : ""}`)), clients, m, clients * (perClient + 1));
          }
        }
      }
    }
    process.stdout.write("\nmedians over rounds:\n");
    for (const [key, ms] of results) {
      const pick = (f: (m: Measured) => number) => median(ms.map(f)).toFixed(2);
      process.stdout.write(
        `${key} clients: CPU ${pick((m) => m.cpuMsPerRequest)} ms/req (main thread ${pick((m) => m.mainThreadMsPerRequest)}), added p50 ${pick((m) => m.p50AddedMs)} p99 ${pick((m) => m.p99AddedMs)} ms, ${pick((m) => m.reqPerSec)} req/s, latency p50 ${pick((m) => m.p50LatencyMs)} p99 ${pick((m) => m.p99LatencyMs)} ms (CPU ${ms.map((m) => m.cpuMsPerRequest.toFixed(2)).join(" · ")})\n`,
      );
    }
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
