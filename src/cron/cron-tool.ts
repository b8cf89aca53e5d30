/**
 * The `cron` tool: the agent schedules, lists and removes jobs of its own session. Jobs are
 * bound to the session (and chat) the call came from, so a reminder comes back where it was
 * asked for.
 */
import { z } from "zod";
import { defineTool, errorResult } from "../tools/builtin/define-tool.js";
import type { Tool } from "../tools/tool.js";
import type { CronService } from "./cron-service.js";
import { describeSchedule } from "./schedule.js";
import type { CronSchedule } from "./types.js";

export interface CronToolOrigin {
  sessionKey: string;
  channel?: string;
  chatId?: string;
  agent?: string;
}

const schema = z.object({
  action: z.enum(["add", "list", "remove"]),
  message: z.string().min(1).optional().describe("add: the instruction you will receive when the job fires."),
  name: z.string().min(1).optional().describe("add: a short name."),
  at: z.string().min(1).optional().describe("add: one-off time, ISO 8601 (e.g. 2026-01-15T09:00:00Z)."),
  every: z.number().int().min(1).optional().describe("add: repeat every N seconds."),
  cron: z.string().min(1).optional().describe('add: cron expression, e.g. "0 8 * * 1-5".'),
  tz: z.string().min(1).optional().describe("add: IANA time zone for the cron expression."),
  id: z.string().min(1).optional().describe("remove: the job id."),
});

export function createCronTool(service: CronService, origin: CronToolOrigin): Tool {
  return defineTool({
    name: "cron",
    description:
      "Schedule work in this conversation: add a job (one of at / every / cron), list the jobs, or remove one by id. " +
      "When a job fires you receive its message as an instruction.",
    schema,
    async run(args) {
      if (args.action === "list") {
        const jobs = service.list({ sessionKey: origin.sessionKey });
        if (jobs.length === 0) return "No scheduled jobs in this conversation.";
        return jobs
          .map((j) => `${j.id} — ${j.name} — ${describeSchedule(j.schedule)}${j.nextRunAt ? `, next ${new Date(j.nextRunAt).toISOString()}` : ", no further runs"}`)
          .join("\n");
      }
      if (args.action === "remove") {
        if (!args.id) return errorResult("Error: remove needs the job id (see action=list).");
        const job = service.get(args.id);
        if (!job || job.sessionKey !== origin.sessionKey) return errorResult(`Error: no job ${args.id} in this conversation.`);
        try {
          service.remove(args.id);
        } catch (err) {
          return errorResult(`Error: ${(err as Error).message}`);
        }
        return `Removed job ${args.id}.`;
      }
      if (!args.message) return errorResult("Error: add needs a message.");
      const given = [args.at, args.every, args.cron].filter((v) => v !== undefined).length;
      if (given !== 1) return errorResult("Error: add needs exactly one of at, every or cron.");
      const schedule: CronSchedule = args.at
        ? { kind: "at", at: args.at }
        : args.every !== undefined
          ? { kind: "every", everyMs: args.every * 1000 }
          : { kind: "cron", expr: args.cron as string, ...(args.tz ? { tz: args.tz } : {}) };
      try {
        const job = service.add({ message: args.message, schedule, ...(args.name ? { name: args.name } : {}), ...origin });
        return `Scheduled job ${job.id} (${describeSchedule(job.schedule)}), next run ${job.nextRunAt ? new Date(job.nextRunAt).toISOString() : "never"}.`;
      } catch (err) {
        return errorResult(`Error: ${(err as Error).message}`);
      }
    },
  });
}
