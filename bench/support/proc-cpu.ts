/**
 * CPU time of live processes and threads from Linux's /proc (utime + stime, in clock ticks):
 * NaN where /proc is missing. Kept apart from processes.ts so the plain-JavaScript bench worker
 * can read its own threads without loading the process helpers.
 */
import { readFileSync } from "node:fs";

/**
 * CPU time (user + system) a live process has used so far, ms; NaN where /proc is missing.
 * `statPath` reads one thread instead (`/proc/<pid>/task/<tid>/stat`).
 */
export function cpuMsOf(pid: number, ticksPerSecond = 100, statPath = `/proc/${pid}/stat`): number {
  try {
    // Fields after the parenthesised command name; utime and stime are the 12th and 13th.
    const stat = readFileSync(statPath, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1000;
  } catch {
    return Number.NaN;
  }
}

/**
 * CPU ms of a live process's main thread so far (its thread id is the pid; 10 ms ticks, so read
 * it over many turns or requests). The rest of the process's CPU ran on other threads: V8's
 * optimizing compiler and GC helpers, libuv's pool.
 */
export function mainThreadCpuMs(pid: number = process.pid): number {
  return cpuMsOf(pid, 100, `/proc/${pid}/task/${pid}/stat`);
}
