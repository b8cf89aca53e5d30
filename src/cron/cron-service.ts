/**
 * The cron service: persisted jobs, one timer for the earliest due job, and a run history per
 * job. Time comes from an injected clock so tests drive it without waiting; croner is used
 * only to compute next runs. Running a job is the caller's `run` seam (the AgentLoop bridge
 * sends it through the job's session lane, so a busy session defers it).
 *
 * The jobs file is the one source of truth: the gateway and `nanobot cron add/remove` each
 * change it by read-modify-write under a lock, the running service watches it (an added job
 * is armed, a removed one stops and its running turn is cancelled), and due jobs are taken
 * from the file as it is when they fire, so a removed job can never fire again.
 */
import { mkdirSync, watch } from "node:fs";
import type { FSWatcher } from "node:fs";
import { basename, dirname } from "node:path";
import { errorMessage } from "../core/errors.js";
import { newId } from "../core/ids.js";
import { silentLogger } from "../core/logger.js";
import type { Logger } from "../core/logger.js";
import { systemClock } from "../core/clock.js";
import type { Clock } from "../core/clock.js";
import { cronFileSignature, parseCronJobs, readCronText, updateCronJobs } from "./cron-store.js";
import { nextRunAfter, validateSchedule } from "./schedule.js";
import { MAX_RUN_HISTORY } from "./types.js";
import type { CronJob, CronJobInput, CronRunRecord } from "./types.js";

/** The cron service runs on the shared clock seam. */
export type CronClock = Clock;
export const systemCronClock: CronClock = systemClock;

export type CronRunOutcome = Pick<CronRunRecord, "status" | "detail">;

export interface CronServiceOptions {
  /** The jobs file (`cronJobsPath(home)`). */
  path: string;
  /** Runs a job; `signal` aborts when the job is removed while it runs. */
  run: (job: CronJob, signal: AbortSignal) => Promise<CronRunOutcome>;
  clock?: CronClock;
  logger?: Logger;
  /**
   * How often a started service checks the file for other writers' edits (ms). Default: every
   * 5 s as a backstop when the file system reports changes to the file's folder (they are
   * checked as they come), else every 500 ms.
   */
  watchIntervalMs?: number;
}

/** Node timers overflow past ~24.8 days; longer waits re-arm on the way. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const DEFAULT_WATCH_MS = 500;
/** The poll behind change events: events can be lost (a full queue) or never come (network mounts). */
const BACKSTOP_WATCH_MS = 5_000;
/** After a failed read or write of the file (locked too long, broken by hand), try again this soon. */
const RETRY_MS = 5_000;

interface RunningJob {
  done: Promise<void>;
  abort: AbortController;
}

export class CronService {
  private jobs: CronJob[] = [];
  /** The file text `jobs` came from: a different text on disk means another writer. */
  private seen = "";
  /** The file's stat when `seen` was last confirmed (see `cronFileSignature`). */
  private seenSignature: string | undefined;
  private timer: unknown;
  private started = false;
  private readonly running = new Map<string, RunningJob>();
  private readonly clock: CronClock;
  private readonly logger: Logger;
  /** Real time, not the injected clock: it watches a real file that other processes write. */
  private watcher: ReturnType<typeof setInterval> | undefined;
  /** Change events for the file's folder, where the file system sends them. */
  private events: FSWatcher | undefined;

  constructor(private readonly options: CronServiceOptions) {
    this.clock = options.clock ?? systemCronClock;
    this.logger = options.logger ?? silentLogger;
    this.adopt(readCronText(options.path));
  }

  /** Schedules every enabled job from now on, arms the timer and starts watching the file. */
  start(): void {
    const now = this.clock.now();
    this.update((jobs) => {
      let changed = false;
      for (const job of jobs) {
        // Runs missed while nanobot was down are not replayed; the series continues from now.
        if (job.enabled && (job.nextRunAt === undefined || job.nextRunAt < now)) {
          this.reschedule(job, now);
          changed = true;
        }
      }
      return { changed, result: undefined };
    });
    this.started = true;
    this.watchFile();
    this.arm();
  }

  stop(): void {
    this.started = false;
    this.unwatchFile();
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Resolves when no job is running. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running.values()].map((r) => r.done));
  }

  list(filter: { sessionKey?: string } = {}): CronJob[] {
    this.reload();
    return this.jobs.filter((j) => !filter.sessionKey || j.sessionKey === filter.sessionKey).map((j) => structuredClone(j));
  }

  get(id: string): CronJob | undefined {
    this.reload();
    const job = this.jobs.find((j) => j.id === id);
    return job ? structuredClone(job) : undefined;
  }

  /** Validates and adds a job; throws Error with a readable reason for a bad schedule. */
  add(input: CronJobInput): CronJob {
    const now = this.clock.now();
    validateSchedule(input.schedule, now);
    const job: CronJob = {
      id: input.id ?? newId("cron"),
      name: input.name ?? input.message.slice(0, 40),
      message: input.message,
      schedule: input.schedule,
      sessionKey: input.sessionKey,
      ...(input.channel ? { channel: input.channel } : {}),
      ...(input.chatId ? { chatId: input.chatId } : {}),
      ...(input.agent ? { agent: input.agent } : {}),
      ...(input.protected ? { protected: true } : {}),
      enabled: true,
      createdAt: now,
      runs: [],
    };
    this.reschedule(job, now);
    this.update((jobs) => {
      if (jobs.some((j) => j.id === job.id)) throw new Error(`a cron job with id ${job.id} exists`);
      jobs.push(job);
      return { changed: true, result: undefined };
    });
    this.arm();
    return structuredClone(job);
  }

  /** Adds a system job unless one with its id exists (heartbeat, dream). */
  ensure(input: CronJobInput & { id: string }): CronJob {
    return this.get(input.id) ?? this.add({ ...input, protected: true });
  }

  /** Removes a job; protected jobs need `force`. Returns false when there is no such job. */
  remove(id: string, options: { force?: boolean } = {}): boolean {
    const removed = this.update((jobs) => {
      const index = jobs.findIndex((j) => j.id === id);
      const job = jobs[index];
      if (!job) return { changed: false, result: false };
      if (job.protected && !options.force) throw new Error(`cron job ${id} is a system job and cannot be removed`);
      jobs.splice(index, 1);
      return { changed: true, result: true };
    });
    this.arm();
    return removed;
  }

  /** Runs every due job now (the timer calls this; tests may too). */
  async tick(): Promise<void> {
    const now = this.clock.now();
    let due: CronJob[];
    try {
      // Due jobs come from the file as it is now: one removed by another process never fires.
      due = this.update((jobs) => {
        const found = jobs.filter((j) => j.enabled && j.nextRunAt !== undefined && j.nextRunAt <= now && !this.running.has(j.id));
        // The series moves on at once, so a slow run never fires twice for one slot.
        for (const job of found) this.reschedule(job, now);
        return { changed: found.length > 0, result: found.map((j) => structuredClone(j)) };
      });
    } catch (err) {
      this.logger.error("could not read or update cron jobs; retrying", { path: this.options.path, error: errorMessage(err) });
      this.arm(RETRY_MS);
      return;
    }
    for (const job of due) {
      const abort = new AbortController();
      const done = this.execute(job, abort.signal).finally(() => this.running.delete(job.id));
      this.running.set(job.id, { done, abort });
    }
    this.arm();
    await Promise.all(due.map((j) => this.running.get(j.id)?.done));
  }

  private async execute(job: CronJob, signal: AbortSignal): Promise<void> {
    const started = this.clock.now();
    let outcome: CronRunOutcome;
    try {
      outcome = await this.options.run(structuredClone(job), signal);
    } catch (err) {
      outcome = { status: "error", detail: errorMessage(err).split("\n")[0] };
      this.logger.warn("cron job failed", { id: job.id, error: outcome.detail });
    }
    const record: CronRunRecord = { at: started, status: outcome.status, durationMs: this.clock.now() - started, ...(outcome.detail ? { detail: outcome.detail.slice(0, 200) } : {}) };
    try {
      this.update((jobs) => {
        // The job may have been removed while it ran.
        const live = jobs.find((j) => j.id === job.id);
        if (!live) return { changed: false, result: undefined };
        live.lastRunAt = started;
        live.runs = [...live.runs, record].slice(-MAX_RUN_HISTORY);
        return { changed: true, result: undefined };
      });
    } catch (err) {
      this.logger.error("could not save a cron run", { id: job.id, error: errorMessage(err) });
    }
  }

  /**
   * Reloads on the folder's change events, and polls: each check compares the file's signature,
   * then its text, with what we last read or wrote, so nothing is missed however soon after
   * start() or within one mtime tick another writer changes it. With events the poll is only a
   * backstop, so an idle gateway is not woken twice a second for it.
   */
  private watchFile(): void {
    this.unwatchFile();
    const folder = dirname(this.options.path);
    const file = basename(this.options.path);
    try {
      mkdirSync(folder, { recursive: true });
      // The folder, not the file: writers replace the file by renaming a new one over it.
      const events = watch(folder, { persistent: false }, (_event, name) => {
        if (name === null || name === file) this.reload();
      });
      // A watch that fails later (the folder removed) leaves the poll to it.
      events.on("error", () => {
        events.close();
        if (this.events === events) this.events = undefined;
      });
      this.events = events;
    } catch {
      // No events here (a watch limit reached, no inotify): the poll alone.
    }
    const pollMs = this.options.watchIntervalMs ?? (this.events ? BACKSTOP_WATCH_MS : DEFAULT_WATCH_MS);
    this.watcher = setInterval(() => this.reload(), pollMs);
    this.watcher.unref();
  }

  private unwatchFile(): void {
    if (this.watcher !== undefined) clearInterval(this.watcher);
    this.watcher = undefined;
    this.events?.close();
    this.events = undefined;
  }

  /** Picks up another writer's edits: re-arms for added jobs, cancels removed running ones. */
  private reload(): void {
    let text: string;
    try {
      // Taken before the read: a write between the two shows as a new signature next time.
      const { signature, settled } = cronFileSignature(this.options.path);
      if (settled && signature === this.seenSignature) return;
      text = readCronText(this.options.path);
      this.seenSignature = signature;
      if (text === this.seen) return;
      this.adopt(text);
    } catch (err) {
      // A broken file (hand edit in progress) keeps the jobs we know until it parses again.
      this.logger.error("could not read cron jobs", { path: this.options.path, error: errorMessage(err) });
      return;
    }
    this.cancelRemoved();
    this.arm();
  }

  private adopt(text: string): void {
    this.jobs = parseCronJobs(this.options.path, text);
    this.seen = text;
  }

  /** A running job that is gone from the file is stopped (its turn is aborted). */
  private cancelRemoved(): void {
    for (const [id, run] of this.running) {
      if (!this.jobs.some((j) => j.id === id) && !run.abort.signal.aborted) {
        this.logger.info("cron job removed while running; stopping it", { id });
        run.abort.abort(new Error(`cron job ${id} was removed`));
      }
    }
  }

  /**
   * One locked read-modify-write of the file. Errors from `change` (bad input) propagate;
   * storage errors propagate for callers (the CLI) and are logged for the timer's own writes.
   */
  private update<T>(change: (jobs: CronJob[]) => { changed: boolean; result: T }): T {
    const { jobs, text, result } = updateCronJobs(this.options.path, change);
    this.jobs = jobs;
    this.seen = text;
    // The file as read here may hold another writer's removal, which the watch will not see
    // again (it compares with `seen`): a running job it removed is stopped now.
    this.cancelRemoved();
    return result;
  }

  private reschedule(job: CronJob, now: number): void {
    const next = nextRunAfter(job.schedule, now, job.createdAt);
    if (next === undefined) {
      delete job.nextRunAt;
      // A one-off job that has run (or whose time passed) stays listed with its history.
      if (job.schedule.kind === "at") job.enabled = false;
    } else job.nextRunAt = next;
  }

  /** Sets the one timer for the earliest due job (or after `retryMs`, when the file could not be read). */
  private arm(retryMs?: number): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.started) return;
    const next = retryMs !== undefined ? this.clock.now() + retryMs : Math.min(...this.jobs.filter((j) => j.enabled && j.nextRunAt !== undefined).map((j) => j.nextRunAt as number));
    if (!Number.isFinite(next)) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, next - this.clock.now()));
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.tick().catch((err: unknown) => this.logger.error("cron tick failed", { error: errorMessage(err) }));
    }, delay);
  }
}
