/**
 * Cron jobs persisted as one JSON file (`<home>/cron/jobs.json`, versioned). Writes go to a
 * temp file renamed over the old one, so a crash never leaves half a file. The CLI edits the
 * same file; a running service reads it when it starts.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { CronJob } from "./types.js";

export const CRON_FILE_VERSION = 1;

export function cronJobsPath(home: string): string {
  return join(home, "cron", "jobs.json");
}

export function readCronJobs(path: string): CronJob[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  const doc = JSON.parse(text) as { version?: number; jobs?: unknown };
  if (doc.version !== CRON_FILE_VERSION || !Array.isArray(doc.jobs)) throw new Error(`${path}: unsupported cron file (version ${String(doc.version)})`);
  return doc.jobs as CronJob[];
}

export function writeCronJobs(path: string, jobs: readonly CronJob[]): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ version: CRON_FILE_VERSION, jobs }, null, 2)}\n`);
  renameSync(tmp, path);
}
