/**
 * Next-run computation. Cron expressions go through croner (only its pure `nextRun`, never its
 * timers), so the service can run on an injected clock and tests never wait.
 */
import type * as Croner from "croner";
import { lazyPackage } from "../core/lazy-package.js";
import type { CronSchedule } from "./types.js";

const croner = lazyPackage<typeof Croner>("croner");

/** Epoch ms of the first run strictly after `afterMs`, or undefined when there is none. */
export function nextRunAfter(schedule: CronSchedule, afterMs: number, createdAt = afterMs): number | undefined {
  switch (schedule.kind) {
    case "at": {
      const at = Date.parse(schedule.at);
      return Number.isFinite(at) && at > afterMs ? at : undefined;
    }
    case "every": {
      if (!(schedule.everyMs > 0)) return undefined;
      // Anchored on creation so a late tick does not drift the whole series.
      const elapsed = Math.max(0, afterMs - createdAt);
      return createdAt + (Math.floor(elapsed / schedule.everyMs) + 1) * schedule.everyMs;
    }
    case "cron": {
      const cron = new (croner().Cron)(schedule.expr, { paused: true, ...(schedule.tz ? { timezone: schedule.tz } : {}) });
      const next = cron.nextRun(new Date(afterMs));
      cron.stop();
      return next ? next.getTime() : undefined;
    }
  }
}

/** Throws an Error with a readable reason when the schedule can never run or does not parse. */
export function validateSchedule(schedule: CronSchedule, now: number): void {
  if (schedule.kind === "at") {
    const at = Date.parse(schedule.at);
    if (!Number.isFinite(at)) throw new Error(`invalid time "${schedule.at}" (expected ISO 8601, e.g. 2026-01-15T09:00:00Z)`);
    if (at <= now) throw new Error(`the time ${schedule.at} is in the past (now is ${new Date(now).toISOString()})`);
  }
  if (schedule.kind === "every" && !(schedule.everyMs >= 1_000)) throw new Error("an interval must be at least 1 second");
  if (schedule.kind === "cron") {
    // The zone is checked on its own, so a bad zone is not reported as a bad expression.
    if (schedule.tz !== undefined && !knownTimeZone(schedule.tz)) throw new Error(`unknown time zone "${schedule.tz}" (expected an IANA name such as Europe/Paris or UTC)`);
    try {
      nextRunAfter(schedule, now);
    } catch (err) {
      throw new Error(`invalid cron expression "${schedule.expr}": ${(err as Error).message}`);
    }
  }
}

export function knownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return zone.trim() !== "";
  } catch {
    return false;
  }
}

export function describeSchedule(schedule: CronSchedule): string {
  switch (schedule.kind) {
    case "at":
      return `at ${schedule.at}`;
    case "every":
      return `every ${formatInterval(schedule.everyMs)}`;
    case "cron":
      return `cron "${schedule.expr}"${schedule.tz ? ` (${schedule.tz})` : ""}`;
  }
}

function formatInterval(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s % 3600 === 0) return `${s / 3600}h`;
  if (s % 60 === 0) return `${s / 60}m`;
  return `${s}s`;
}
