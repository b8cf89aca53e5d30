/**
 * Cron jobs persisted as one JSON file (`<home>/cron/jobs.json`, versioned). Writes go to a
 * temp file renamed over the old one, so a crash never leaves half a file. The gateway and the
 * CLI both edit it, so every change is a read-modify-write under a lock file: a writer always
 * starts from the newest file and never drops another writer's change.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { withFileLock } from "./file-lock.js";
import type { CronJob } from "./types.js";

export const CRON_FILE_VERSION = 1;

export function cronJobsPath(home: string): string {
  return join(home, "cron", "jobs.json");
}

/** The file's text, or "" when there is none (the text doubles as its version). */
export function readCronText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw err;
  }
}

/**
 * File timestamps move in the kernel's coarse ticks, so two writes of the same size within one
 * tick can leave the same stat: for this long after a change the text is read anyway.
 */
export const CRON_SETTLE_MS = 2_000;

/**
 * Identity, size and change times of the file ("" when there is none), and whether it changed
 * long enough ago that an equal signature means an equal file. A watcher polling twice a second
 * reads the text only when the signature moved or the file is still settling.
 */
export function cronFileSignature(path: string, now = Date.now()): { signature: string; settled: boolean } {
  const stat = statSync(path, { bigint: true, throwIfNoEntry: false });
  if (!stat) return { signature: "", settled: true };
  return {
    signature: `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`,
    settled: now - Number(stat.ctimeNs / 1_000_000n) > CRON_SETTLE_MS,
  };
}

export function parseCronJobs(path: string, text: string): CronJob[] {
  if (text === "") return [];
  let doc: { version?: number; jobs?: unknown };
  try {
    doc = JSON.parse(text) as { version?: number; jobs?: unknown };
  } catch (err) {
    throw new Error(`${path}: not valid JSON (${(err as Error).message})`);
  }
  if (doc.version !== CRON_FILE_VERSION || !Array.isArray(doc.jobs)) throw new Error(`${path}: unsupported cron file (version ${String(doc.version)})`);
  return doc.jobs as CronJob[];
}

export function readCronJobs(path: string): CronJob[] {
  return parseCronJobs(path, readCronText(path));
}

function serialise(jobs: readonly CronJob[]): string {
  return `${JSON.stringify({ version: CRON_FILE_VERSION, jobs }, null, 2)}\n`;
}

/** Replaces the file (no lock: for tests and one-shot tools; writers use `updateCronJobs`). */
export function writeCronJobs(path: string, jobs: readonly CronJob[]): string {
  mkdirSync(dirname(path), { recursive: true });
  const text = serialise(jobs);
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
  return text;
}

export interface CronUpdate<T> {
  /** The jobs as written (or as read, when nothing changed). */
  jobs: CronJob[];
  /** The file's text afterwards. */
  text: string;
  result: T;
}

/**
 * Reads the newest jobs under the lock, lets `change` edit them in place, and writes them back
 * when it returns `changed: true`.
 */
export function updateCronJobs<T>(path: string, change: (jobs: CronJob[]) => { changed: boolean; result: T }): CronUpdate<T> {
  mkdirSync(dirname(path), { recursive: true });
  return withFileLock(path, () => {
    const before = readCronText(path);
    const jobs = parseCronJobs(path, before);
    const { changed, result } = change(jobs);
    const text = changed ? writeCronJobs(path, jobs) : before;
    return { jobs, text, result };
  });
}
