/**
 * The cron service: persisted jobs, one timer for the earliest due job, and a run history per
 * job. Time comes from an injected clock so tests drive it without waiting; croner is used
 * only to compute next runs. Running a job is the caller's `run` seam (the AgentLoop bridge
 * sends it through the job's session lane, so a busy session defers it).
 */
import { errorMessage } from "../core/errors.js";
import { newId } from "../core/ids.js";
import { silentLogger } from "../core/logger.js";
import type { Logger } from "../core/logger.js";
import { systemClock } from "../core/clock.js";
import type { Clock } from "../core/clock.js";
import { readCronJobs, writeCronJobs } from "./cron-store.js";
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
  run: (job: CronJob) => Promise<CronRunOutcome>;
  clock?: CronClock;
  logger?: Logger;
}

/** Node timers overflow past ~24.8 days; longer waits re-arm on the way. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class CronService {
  private jobs: CronJob[] = [];
  private timer: unknown;
  private started = false;
  private readonly running = new Map<string, Promise<void>>();
  private readonly clock: CronClock;
  private readonly logger: Logger;

  constructor(private readonly options: CronServiceOptions) {
    this.clock = options.clock ?? systemCronClock;
    this.logger = options.logger ?? silentLogger;
    this.jobs = readCronJobs(options.path);
  }

  /** Loads the file, schedules every enabled job from now on, and arms the timer. */
  start(): void {
    this.jobs = readCronJobs(this.options.path);
    const now = this.clock.now();
    for (const job of this.jobs) {
      // Runs missed while nanobot was down are not replayed; the series continues from now.
      if (job.enabled && (job.nextRunAt === undefined || job.nextRunAt < now)) this.reschedule(job, now);
    }
    this.started = true;
    this.save();
    this.arm();
  }

  stop(): void {
    this.started = false;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Resolves when no job is running. */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running.values());
  }

  list(filter: { sessionKey?: string } = {}): CronJob[] {
    return this.jobs.filter((j) => !filter.sessionKey || j.sessionKey === filter.sessionKey).map((j) => structuredClone(j));
  }

  get(id: string): CronJob | undefined {
    const job = this.jobs.find((j) => j.id === id);
    return job ? structuredClone(job) : undefined;
  }

  /** Validates and adds a job; throws Error with a readable reason for a bad schedule. */
  add(input: CronJobInput): CronJob {
    const now = this.clock.now();
    validateSchedule(input.schedule, now);
    if (input.id && this.jobs.some((j) => j.id === input.id)) throw new Error(`a cron job with id ${input.id} exists`);
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
    this.jobs.push(job);
    this.save();
    this.arm();
    return structuredClone(job);
  }

  /** Adds a system job unless one with its id exists (heartbeat, dream). */
  ensure(input: CronJobInput & { id: string }): CronJob {
    return this.get(input.id) ?? this.add({ ...input, protected: true });
  }

  /** Removes a job; protected jobs need `force`. Returns false when there is no such job. */
  remove(id: string, options: { force?: boolean } = {}): boolean {
    const job = this.jobs.find((j) => j.id === id);
    if (!job) return false;
    if (job.protected && !options.force) throw new Error(`cron job ${id} is a system job and cannot be removed`);
    this.jobs = this.jobs.filter((j) => j !== job);
    this.save();
    this.arm();
    return true;
  }

  /** Runs every due job now (the timer calls this; tests may too). */
  async tick(): Promise<void> {
    const now = this.clock.now();
    const due = this.jobs.filter((j) => j.enabled && j.nextRunAt !== undefined && j.nextRunAt <= now && !this.running.has(j.id));
    for (const job of due) {
      // The series moves on at once, so a slow run never fires twice for one slot.
      this.reschedule(job, now);
      const run = this.execute(job).finally(() => this.running.delete(job.id));
      this.running.set(job.id, run);
    }
    if (due.length > 0) this.save();
    this.arm();
    await Promise.all(due.map((j) => this.running.get(j.id)));
  }

  private async execute(job: CronJob): Promise<void> {
    const started = this.clock.now();
    let outcome: CronRunOutcome;
    try {
      outcome = await this.options.run(structuredClone(job));
    } catch (err) {
      outcome = { status: "error", detail: errorMessage(err).split("\n")[0] };
      this.logger.warn("cron job failed", { id: job.id, error: outcome.detail });
    }
    const record: CronRunRecord = { at: started, status: outcome.status, durationMs: this.clock.now() - started, ...(outcome.detail ? { detail: outcome.detail.slice(0, 200) } : {}) };
    // The job may have been removed while it ran.
    const live = this.jobs.find((j) => j.id === job.id);
    if (!live) return;
    live.lastRunAt = started;
    live.runs = [...live.runs, record].slice(-MAX_RUN_HISTORY);
    this.save();
  }

  private reschedule(job: CronJob, now: number): void {
    const next = nextRunAfter(job.schedule, now, job.createdAt);
    if (next === undefined) {
      delete job.nextRunAt;
      // A one-off job that has run (or whose time passed) stays listed with its history.
      if (job.schedule.kind === "at") job.enabled = false;
    } else job.nextRunAt = next;
  }

  private arm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.started) return;
    const next = Math.min(...this.jobs.filter((j) => j.enabled && j.nextRunAt !== undefined).map((j) => j.nextRunAt as number));
    if (!Number.isFinite(next)) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, next - this.clock.now()));
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.tick().catch((err: unknown) => this.logger.error("cron tick failed", { error: errorMessage(err) }));
    }, delay);
  }

  private save(): void {
    try {
      writeCronJobs(this.options.path, this.jobs);
    } catch (err) {
      this.logger.error("could not save cron jobs", { path: this.options.path, error: errorMessage(err) });
    }
  }
}
