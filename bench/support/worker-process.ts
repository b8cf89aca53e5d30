/**
 * One job of the side-by-side bench's worker (`contenders/worker.ts`) in a process of its own:
 * the job goes in through `BENCH_JOB`, the figures come back over IPC. The peers bench runs it
 * plainly; `profile-jit.ts` runs it under V8's traces and reads what it printed.
 */
import { spawn } from "node:child_process";
import type { WorkerJob, WorkerResult } from "../contenders/worker.js";
import { REPO_DIR } from "./processes.js";

export interface WorkerProcessOptions {
  /** Killed after this long (default 10 minutes). */
  timeoutMs?: number;
  /** A command the worker's `node` runs under (`["stdbuf", "-oL"]`). */
  wrapper?: readonly string[];
  /** Flags for `node` itself (`--trace-opt`). */
  nodeFlags?: readonly string[];
  env?: Record<string, string>;
  /** Keep the worker's stdout; the run then resolves once the process has closed, with all of it. */
  captureStdout?: boolean;
}

/** Resolves with the worker's figures (and its stdout when captured); rejects with its error or exit. */
export function runWorkerProcess(worker: string, job: WorkerJob, options: WorkerProcessOptions = {}): Promise<{ result: WorkerResult; stdout: string }> {
  const { timeoutMs = 600_000, wrapper = [], nodeFlags = [], env = {}, captureStdout = false } = options;
  const label = `${job.contender} ${job.workload}`;
  return new Promise((resolve, reject) => {
    const [command, ...args] = [...wrapper, process.execPath, ...nodeFlags, worker];
    const child = spawn(command!, args, {
      cwd: REPO_DIR,
      env: { ...process.env, ...env, BENCH_JOB: JSON.stringify(job) },
      stdio: ["ignore", captureStdout ? "pipe" : "ignore", "pipe", "ipc"],
    });
    let stdout = "";
    let stderr = "";
    let result: WorkerResult | undefined;
    let settled = false;
    const settle = (done: () => void): void => {
      if (settled) return;
      settled = true;
      done();
    };
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("message", (msg: { ok: boolean; result?: WorkerResult; error?: string }) => {
      if (!msg.ok || !msg.result) return settle(() => reject(new Error(`${label}: ${msg.error ?? "failed"}`)));
      result = msg.result;
      const figures = result;
      if (!captureStdout) settle(() => resolve({ result: figures, stdout }));
    });
    child.once("error", (err) => settle(() => reject(err)));
    child.once("close", (code) => {
      clearTimeout(timer);
      settle(() => (result ? resolve({ result, stdout }) : reject(new Error(`${label}: worker exited with ${code}\n${stderr.slice(-2000)}`))));
    });
  });
}
