/**
 * CPU time of live processes and threads from Linux's /proc: NaN where /proc is missing. Kept
 * apart from processes.ts so the plain-JavaScript bench worker can read its own threads without
 * loading the process helpers.
 *
 * Each thread's run time comes from its `schedstat` (nanoseconds, what the scheduler counted),
 * not from `stat`'s utime + stime, which advance in 10 ms ticks: over the gateway bench's
 * one-client load (21 requests of ~3 ms each) ticks could only say 2.86, 3.33 or 3.81 ms per
 * request. Where `schedstat` is missing the ticks are read instead.
 */
import { readFileSync, readdirSync } from "node:fs";

/** `/proc/<pid>/task/<tid>/stat`'s utime + stime, ms (10 ms ticks). */
function tickMs(statPath: string, ticksPerSecond = 100): number {
  try {
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    const stat = readFileSync(statPath, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1000;
  } catch {
    return Number.NaN;
  }
}

/** A thread's run time so far, ms; NaN when its `schedstat` cannot be read. */
function runMs(taskDir: string): number {
  try {
    return Number(readFileSync(`${taskDir}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU time a live process has used so far, ms: the sum of its live threads' run times (a thread
 * that exits between two readings takes its time with it; none does in a measured load here).
 * NaN where /proc is missing.
 */
export function cpuMsOf(pid: number): number {
  try {
    let total = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const ms = runMs(`/proc/${pid}/task/${tid}`);
      if (Number.isNaN(ms)) return tickMs(`/proc/${pid}/stat`);
      total += ms;
    }
    return total;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU ms of a live process's main thread so far (its thread id is the pid). The rest of the
 * process's CPU ran on other threads: V8's optimizing compiler and GC helpers, libuv's pool.
 */
export function mainThreadCpuMs(pid: number = process.pid): number {
  const ms = runMs(`/proc/${pid}/task/${pid}`);
  return Number.isNaN(ms) ? tickMs(`/proc/${pid}/task/${pid}/stat`) : ms;
}
