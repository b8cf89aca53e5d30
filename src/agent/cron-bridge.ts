/**
 * Cron jobs as AgentLoop turns. A job's turn goes through its session's lane (so it waits
 * while that session is busy) and its reply is delivered to the chat that created it. The
 * system jobs — heartbeat (every 30 min) and Dream (every 2 h) — are installed here.
 */
import { tracedModelCall } from "../engine/loop/model-span.js";
import type { MessageBus } from "../bus/types.js";
import type { NanobotConfig } from "../config/index.js";
import { errorMessage } from "../core/errors.js";
import { systemMessage, textOf, userMessage } from "../core/message-helpers.js";
import type { CronRunOutcome, CronService } from "../cron/cron-service.js";
import {
  DEFAULT_HEARTBEAT_INTERVAL_S,
  evaluatorSaysNotify,
  HEARTBEAT_EVALUATOR_PROMPT,
  HEARTBEAT_JOB_ID,
  HEARTBEAT_SESSION_KEY,
  runHeartbeat,
} from "../cron/heartbeat.js";
import type { CronJob, CronSchedule } from "../cron/types.js";
import { parseSessionKey } from "../session/keys.js";
import type { AgentLoop } from "./agent-loop.js";

export const DREAM_JOB_ID = "dream";
export const DREAM_INTERVAL_MS = 2 * 60 * 60 * 1000;
/** Sessions that are not a chat with the user (heartbeat reports never go there). */
const NON_CHAT_CHANNELS = new Set(["cli", "api", "cron", "heartbeat", "system", "mcp", "unified"]);
const DETAIL_CHARS = 200;

export interface CronBridgeOptions {
  loop: AgentLoop;
  bus?: MessageBus;
}

/** The `run` seam of a CronService driving this loop. */
export function createCronRunner(options: CronBridgeOptions): (job: CronJob, signal: AbortSignal) => Promise<CronRunOutcome> {
  const { loop, bus } = options;
  return async (job, signal) => {
    if (job.id === HEARTBEAT_JOB_ID) return heartbeat(options);
    if (job.id === DREAM_JOB_ID) {
      const result = await loop.runDream();
      if (result.error) return { status: "error", detail: result.error };
      return result.ran ? { status: "ok", detail: `processed ${result.processed}, edited ${result.edited.join(", ") || "nothing"}` } : { status: "skipped", detail: "no new history" };
    }
    // Aborted when the job is removed while it runs (`nanobot cron remove`).
    const reply = await loop.process(
      {
        sessionKey: job.sessionKey,
        content: `[Scheduled task "${job.name}"]\n${job.message}`,
        channel: "cron",
        ...(job.agent ? { agent: job.agent } : {}),
      },
      { signal },
    );
    if (reply.stopReason === "aborted") return { status: "skipped", detail: "stopped" };
    if (reply.stopReason === "error") return { status: "error", detail: reply.error ?? "turn failed" };
    if (bus && job.channel && job.chatId && reply.content) {
      await bus.publishOutbound({ kind: "message", id: reply.turnId ?? `${job.id}:${Date.now()}`, channel: job.channel, chatId: job.chatId, content: reply.content });
    }
    return { status: "ok", detail: reply.content.slice(0, DETAIL_CHARS) };
  };
}

async function heartbeat({ loop, bus }: CronBridgeOptions): Promise<CronRunOutcome> {
  const runtime = loop.runtime;
  return runHeartbeat({
    workspace: runtime.workspace,
    runTurn: async (prompt) => (await loop.process({ sessionKey: HEARTBEAT_SESSION_KEY, content: prompt, channel: "cron" })).content,
    evaluate: async (tasks, answer) => {
      const profile = await runtime.resolveAgent();
      try {
        const request = { messages: [systemMessage(HEARTBEAT_EVALUATOR_PROMPT), userMessage(`Tasks:\n${tasks.map((t) => `- ${t}`).join("\n")}\n\nResult:\n${answer}`)], maxTokens: 16, temperature: 0 };
        const response = await tracedModelCall(profile.model, request, () => profile.model.stream(request).result(), "heartbeat");
        return evaluatorSaysNotify(textOf(response.message));
      } catch (err) {
        runtime.logger.warn("heartbeat evaluator failed; staying silent", { error: errorMessage(err) });
        return false;
      }
    },
    deliver: async (answer) => {
      const target = await latestChat(loop);
      if (!bus || !target) {
        runtime.logger.info("heartbeat result not delivered: no chat to deliver to");
        return;
      }
      await bus.publishOutbound({ kind: "message", id: `heartbeat:${Date.now()}`, channel: target.channel, chatId: target.chatId, content: answer });
    },
  });
}

/**
 * The chat the user used most recently (heartbeat reports go there): the `chat` a channel turn
 * recorded, else the session key's `channel:chatId` (sessions written before `chat` existed).
 */
async function latestChat(loop: AgentLoop): Promise<{ channel: string; chatId: string } | undefined> {
  const sessions = await loop.runtime.store().listSessions();
  const sorted = [...sessions].sort((a, b) => b.updatedAt - a.updatedAt);
  for (const s of sorted) {
    const target = recordedChat(s.metadata.chat) ?? chatOfKey(s.key);
    if (target && !NON_CHAT_CHANNELS.has(target.channel)) return target;
  }
  return undefined;
}

function recordedChat(value: unknown): { channel: string; chatId: string } | undefined {
  if (!value || typeof value !== "object") return undefined;
  const { channel, chatId } = value as Record<string, unknown>;
  return typeof channel === "string" && typeof chatId === "string" && channel && chatId ? { channel, chatId } : undefined;
}

function chatOfKey(key: string): { channel: string; chatId: string } | undefined {
  try {
    return parseSessionKey(key);
  } catch {
    // Keys that are not channel:chatId are not chats.
    return undefined;
  }
}

/** Installs the protected heartbeat and Dream jobs (unless disabled in config). */
export function installSystemJobs(service: CronService, config: NanobotConfig): void {
  const hb = config.gateway.heartbeat;
  if (hb?.enabled !== false) {
    service.ensure({
      id: HEARTBEAT_JOB_ID,
      name: "heartbeat",
      message: "Check HEARTBEAT.md",
      schedule: { kind: "every", everyMs: (hb?.intervalS ?? DEFAULT_HEARTBEAT_INTERVAL_S) * 1000 },
      sessionKey: HEARTBEAT_SESSION_KEY,
    });
  }
  const dream = config.agents.defaults.dream;
  if (dream?.enabled !== false) {
    // dream.cron (the Python nanobot's legacy override) wins over dream.intervalH.
    const schedule: CronSchedule = dream?.cron
      ? { kind: "cron", expr: dream.cron, ...(config.agents.defaults.timezone ? { tz: config.agents.defaults.timezone } : {}) }
      : { kind: "every", everyMs: dream?.intervalH ? dream.intervalH * 3_600_000 : DREAM_INTERVAL_MS };
    // The job outlives the process (cron store): a changed schedule in the config replaces it.
    const existing = service.get(DREAM_JOB_ID);
    if (existing && JSON.stringify(existing.schedule) !== JSON.stringify(schedule)) service.remove(DREAM_JOB_ID, { force: true });
    service.ensure({ id: DREAM_JOB_ID, name: "dream", message: "Update long-term memory", schedule, sessionKey: "system:dream" });
  } else if (service.get(DREAM_JOB_ID)) {
    // Installed by an earlier start: `enabled: false` must stop it, not only skip installing it.
    service.remove(DREAM_JOB_ID, { force: true });
  }
}
