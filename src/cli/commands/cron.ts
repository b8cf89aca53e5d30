/**
 * `nanobot cron list|add|remove`: manage the scheduled jobs in `$NANOBOT_HOME/cron/jobs.json`.
 * The CLI edits the file under its lock; a running gateway notices the edit within a second
 * (a removed job stops firing, an added one is scheduled). System jobs (heartbeat, dream) are
 * listed but only removed with `--force`.
 */
import type { Command } from "commander";
import { nanobotHome } from "../../config/paths.js";
import { CronService } from "../../cron/cron-service.js";
import { cronJobsPath } from "../../cron/cron-store.js";
import { describeSchedule } from "../../cron/schedule.js";
import type { CronJob, CronSchedule } from "../../cron/types.js";
import { DEFAULT_CLI_SESSION_KEY } from "../../session/keys.js";
import type { CliContext } from "../context.js";

interface AddOptions {
  message: string;
  name?: string;
  every?: string;
  at?: string;
  cron?: string;
  tz?: string;
  session: string;
  channel?: string;
  chat?: string;
  agent?: string;
}

/** Jobs are only read and written here; nothing runs, so the service is never started. */
function openService(ctx: CliContext): CronService {
  return new CronService({ path: cronJobsPath(nanobotHome(ctx.io.env, ctx.io.cwd)), run: async () => ({ status: "skipped" }) });
}

export function registerCronCommand(program: Command, ctx: CliContext): void {
  const cron = program.command("cron").description("list, add and remove scheduled jobs");

  cron
    .command("list")
    .description("list scheduled jobs")
    .option("--json", "print a JSON array")
    .action((opts: { json?: boolean }) => {
      const jobs = openService(ctx).list();
      if (opts.json) return void ctx.io.stdout.write(`${JSON.stringify(jobs, null, 2)}\n`);
      if (jobs.length === 0) return void ctx.io.stdout.write("no scheduled jobs\n");
      ctx.io.stdout.write(table(["ID", "NAME", "SCHEDULE", "SESSION", "NEXT RUN", "LAST"], jobs.map(row)));
    });

  cron
    .command("add")
    .description("add a job: one of --every, --at or --cron")
    .requiredOption("-m, --message <text>", "what the agent is asked when the job fires")
    .option("-n, --name <name>", "a short name")
    .option("--every <seconds>", "repeat every N seconds")
    .option("--at <iso>", "run once at this time (ISO 8601)")
    .option("--cron <expr>", 'cron expression, e.g. "0 8 * * 1-5"')
    .option("--tz <zone>", "IANA time zone for --cron")
    .option("-s, --session <key>", "session the job runs in", DEFAULT_CLI_SESSION_KEY)
    .option("--channel <name>", "deliver replies to this channel")
    .option("--chat <id>", "deliver replies to this chat of the channel")
    .option("-a, --agent <name>", "agent that answers")
    .action((opts: AddOptions) => {
      const schedule = scheduleFrom(opts);
      if (typeof schedule === "string") return usage(ctx, schedule);
      try {
        const job = openService(ctx).add({
          message: opts.message,
          schedule,
          sessionKey: opts.session,
          ...(opts.name ? { name: opts.name } : {}),
          ...(opts.channel ? { channel: opts.channel } : {}),
          ...(opts.chat ? { chatId: opts.chat } : {}),
          ...(opts.agent ? { agent: opts.agent } : {}),
        });
        ctx.io.stdout.write(`added ${job.id} (${describeSchedule(job.schedule)}), next run ${job.nextRunAt ? new Date(job.nextRunAt).toISOString() : "never"}\n`);
      } catch (err) {
        usage(ctx, (err as Error).message);
      }
    });

  cron
    .command("remove")
    .description("remove a job by id")
    .argument("<id>", "job id (see cron list)")
    .option("--force", "also remove a system job (heartbeat, dream)")
    .action((id: string, opts: { force?: boolean }) => {
      try {
        if (!openService(ctx).remove(id, { force: opts.force === true })) {
          ctx.io.stderr.write(`error: no cron job ${id}\n`);
          ctx.exitCode = 1;
          return;
        }
        ctx.io.stdout.write(`removed ${id}\n`);
      } catch (err) {
        usage(ctx, (err as Error).message);
      }
    });
}

function scheduleFrom(opts: AddOptions): CronSchedule | string {
  const given = [opts.every, opts.at, opts.cron].filter((v) => v !== undefined).length;
  if (given !== 1) return "give exactly one of --every, --at or --cron";
  if (opts.tz !== undefined && opts.cron === undefined) return "--tz applies to --cron only";
  if (opts.every !== undefined) {
    const seconds = Number(opts.every);
    if (!Number.isInteger(seconds) || seconds < 1) return `--every expects a whole number of seconds, got "${opts.every}"`;
    return { kind: "every", everyMs: seconds * 1000 };
  }
  if (opts.at !== undefined) return { kind: "at", at: opts.at };
  return { kind: "cron", expr: opts.cron as string, ...(opts.tz ? { tz: opts.tz } : {}) };
}

function usage(ctx: CliContext, message: string): void {
  ctx.io.stderr.write(`error: ${message}\n`);
  ctx.exitCode = 2;
}

function row(job: CronJob): string[] {
  const last = job.runs.at(-1);
  return [
    job.id,
    job.protected ? `${job.name} (system)` : job.name,
    describeSchedule(job.schedule),
    job.sessionKey,
    job.enabled && job.nextRunAt ? new Date(job.nextRunAt).toISOString() : "-",
    last ? `${last.status} ${new Date(last.at).toISOString()}` : "-",
  ];
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ").trimEnd();
  return `${[line(header), ...rows.map(line)].join("\n")}\n`;
}
