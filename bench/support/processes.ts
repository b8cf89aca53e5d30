/**
 * Child processes for the side-by-side benchmarks: the fake LLM server, the contender workers
 * and the products under test each run in their own process, so CPU and RSS are per process.
 */
import { spawn } from "node:child_process";
import type { ChildProcess, SpawnOptions } from "node:child_process";
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export { cpuMsOf } from "./proc-cpu.js";

export const BENCH_DIR = fileURLToPath(new URL("../", import.meta.url));
export const REPO_DIR = fileURLToPath(new URL("../../", import.meta.url));

/** Epoch ms with sub-ms precision, comparable across processes of this machine. */
export function nowEpochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** A memory line of a live process's /proc status (`VmHWM`, `VmRSS`), MiB; NaN where /proc is missing. */
function procStatusMiB(pid: number, field: "VmHWM" | "VmRSS"): number {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** The kernel's peak RSS of a live process (VmHWM), MiB; NaN where /proc is missing. */
export const peakRssMiB = (pid: number): number => procStatusMiB(pid, "VmHWM");

/** The kernel's current RSS of a live process (VmRSS), MiB; NaN where /proc is missing. */
export const rssMiB = (pid: number): number => procStatusMiB(pid, "VmRSS");

/** Resolves with the first stdout line of `child` that parses as JSON with a `port`. */
export function waitForPort(child: ChildProcess, what: string, timeoutMs = 30_000): Promise<number> {
  return new Promise((resolve, reject) => {
    // The tail only (for the error below): a child that logs for hours must not grow this process.
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-8_192)));
    const timer = setTimeout(() => reject(new Error(`${what} did not start in ${timeoutMs} ms\n${stderr}`)), timeoutMs);
    const rl = createInterface({ input: child.stdout! });
    rl.on("line", (line) => {
      const port = /"port":(\d+)/.exec(line)?.[1] ?? /listening on http:\/\/[^:]+:(\d+)/.exec(line)?.[1];
      if (port) {
        clearTimeout(timer);
        rl.close();
        // Closing the reader pauses the stream: keep draining it, or a child that writes more
        // than the pipe holds (64 KB) would block on its next write.
        child.stdout?.resume();
        resolve(Number(port));
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} before listening\n${stderr}`));
    });
  });
}

export interface FakeStats {
  requests: number;
  firstRequestAt: number | null;
  /** Request bytes received since the last reset. */
  bodyBytes: number;
  /** TCP connections the fake accepted since the last reset (the reset's own included). */
  connections: number;
  /** The fake's own arrival → answer time (its delay included), ms. */
  answerMs: { p50: number; p99: number } | null;
}

export interface FakeLLM {
  baseURL: string;
  pid: number;
  /** Sets the response delay and resets the request counter. */
  reset(delayMs: number): Promise<void>;
  stats(): Promise<FakeStats>;
  close(): Promise<void>;
}

/** Starts `bench/fake-llm-server.ts` in its own process. */
export async function startFakeLLMProcess(delayMs = 0): Promise<FakeLLM> {
  const child = spawn(process.execPath, ["--import", "tsx", `${BENCH_DIR}fake-llm-server.ts`, `--delay=${delayMs}`], {
    cwd: REPO_DIR,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const port = await waitForPort(child, "fake LLM server");
  const root = `http://127.0.0.1:${port}`;
  return {
    baseURL: `${root}/v1`,
    pid: child.pid!,
    async reset(ms) {
      const res = await fetch(`${root}/_control`, { method: "POST", body: JSON.stringify({ delayMs: ms }) });
      await res.arrayBuffer();
    },
    async stats() {
      const res = await fetch(`${root}/_stats`);
      return (await res.json()) as FakeStats;
    },
    close: () => stopChild(child),
  };
}

/** Ends a child we started (SIGTERM, then SIGKILL after 3 s) and waits for its exit. */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), 3_000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    child.stdin?.end();
    child.kill("SIGTERM");
  });
}

/** Runs a command to its exit, with a hard time limit; resolves with its exit code and output. */
export function runToExit(
  command: string,
  args: string[],
  options: SpawnOptions & { timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string; startedAt: number; endedAt: number }> {
  return new Promise((resolve, reject) => {
    const startedAt = nowEpochMs();
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, startedAt, endedAt: nowEpochMs() });
    });
  });
}
