/**
 * Cron vocabulary: a job is a message the agent receives on a schedule, in the session that
 * created it. Schedules are a one-off time (`at`), a fixed interval (`every`) or a cron
 * expression with an optional IANA time zone.
 */

export type CronSchedule =
  | { kind: "at"; /** ISO 8601 instant. */ at: string }
  | { kind: "every"; everyMs: number }
  | { kind: "cron"; expr: string; tz?: string };

export interface CronRunRecord {
  /** Epoch ms. */
  at: number;
  status: "ok" | "error" | "skipped";
  durationMs: number;
  /** Reply excerpt or error line. */
  detail?: string;
}

export interface CronJob {
  id: string;
  name: string;
  /** What the agent is asked when the job fires. */
  message: string;
  schedule: CronSchedule;
  /** The session the job runs in (the one that created it). */
  sessionKey: string;
  /** Where the reply is delivered (bus), when the job came from a chat. */
  channel?: string;
  chatId?: string;
  agent?: string;
  enabled: boolean;
  /** System jobs (heartbeat, dream) the cron tool and CLI cannot remove. */
  protected?: boolean;
  createdAt: number;
  /** Epoch ms of the next run; absent when the job will not run again. */
  nextRunAt?: number;
  lastRunAt?: number;
  /** Newest last, at most `MAX_RUN_HISTORY`. */
  runs: CronRunRecord[];
}

export interface CronJobInput {
  name?: string;
  message: string;
  schedule: CronSchedule;
  sessionKey: string;
  channel?: string;
  chatId?: string;
  agent?: string;
  protected?: boolean;
  /** Fixed id (system jobs); generated otherwise. */
  id?: string;
}

export const MAX_RUN_HISTORY = 20;
