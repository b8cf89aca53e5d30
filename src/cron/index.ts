export { CronService, systemCronClock } from "./cron-service.js";
export type { CronClock, CronRunOutcome, CronServiceOptions } from "./cron-service.js";
export { CRON_FILE_VERSION, cronJobsPath, readCronJobs, writeCronJobs } from "./cron-store.js";
export { createCronTool } from "./cron-tool.js";
export type { CronToolOrigin } from "./cron-tool.js";
export {
  DEFAULT_HEARTBEAT_INTERVAL_S,
  evaluatorSaysNotify,
  HEARTBEAT_EVALUATOR_PROMPT,
  HEARTBEAT_JOB_ID,
  HEARTBEAT_SESSION_KEY,
  heartbeatTasks,
  runHeartbeat,
} from "./heartbeat.js";
export type { HeartbeatOutcome, HeartbeatSeams } from "./heartbeat.js";
export { describeSchedule, nextRunAfter, validateSchedule } from "./schedule.js";
export { MAX_RUN_HISTORY } from "./types.js";
export type { CronJob, CronJobInput, CronRunRecord, CronSchedule } from "./types.js";
