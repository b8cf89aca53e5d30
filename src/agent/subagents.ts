/**
 * Sub-agents: the `spawn` tool starts a background run with its own tool set (no spawn,
 * message or cron, so a sub-agent can neither fan out nor talk to the user), limited by
 * `maxConcurrentSubagents`. When it ends, its result goes back to the origin session through
 * `onResult` — the AgentLoop injects it into the running turn or starts a system turn.
 */
import { z } from "zod";
import { errorMessage, isAbortError } from "../core/errors.js";
import { newId } from "../core/ids.js";
import type { Logger } from "../core/logger.js";
import { systemMessage, textOf, userMessage } from "../core/message-helpers.js";
import type { Message, ToolMessage } from "../core/messages.js";
import { runAgent } from "../engine/loop/run-agent.js";
import { defineTool } from "../tools/builtin/define-tool.js";
import type { Tool } from "../tools/tool.js";
import type { AgentProfile } from "./runtime.js";
import { Semaphore } from "./semaphore.js";
import { holdSubagentSession } from "./subagent-chain.js";

/** Tools a sub-agent never gets. */
const spawnSchema = z.object({
  task: z.string().min(1).describe("What the sub-agent must do, with every detail it needs."),
  label: z.string().min(1).optional().describe("A short name for the task."),
  wait: z.boolean().optional().describe("Wait for the result instead of running in the background (default false)."),
});

export const SUBAGENT_EXCLUDED_TOOLS = ["spawn", "message", "cron"] as const;

export interface SubagentOrigin {
  sessionKey: string;
  channel?: string;
  chatId?: string;
  agent?: string;
}

export interface SubagentResult {
  id: string;
  label: string;
  task: string;
  origin: SubagentOrigin;
  status: "completed" | "failed" | "stopped";
  content: string;
}

export interface SubagentManagerOptions {
  limit: number;
  workspace: string;
  logger: Logger;
  /** Background results (not `wait`ed ones) are handed here. */
  onResult: (result: SubagentResult) => void;
  /**
   * `agents.defaults.failOnToolError` (the Python key, which governs sub-agents only; default
   * true): a sub-agent stops at its first failing tool call and reports what it got done.
   */
  failOnToolError: boolean;
}

interface Running {
  id: string;
  sessionKey: string;
  abort: AbortController;
}

const SUBAGENT_PROMPT = [
  "You are a sub-agent working on one task for the main assistant. Work autonomously with your",
  "tools, then answer with the result: concise, complete, ready to be relayed. You cannot talk to",
  "the user; never ask questions back.",
].join(" ");

export class SubagentManager {
  private readonly gate: Semaphore;
  private readonly running = new Map<string, Running>();

  constructor(private readonly options: SubagentManagerOptions) {
    this.gate = new Semaphore(Math.max(1, options.limit));
  }

  /** Sub-agents running or waiting for a slot, optionally of one session. */
  count(sessionKey?: string): number {
    let n = 0;
    for (const r of this.running.values()) if (!sessionKey || r.sessionKey === sessionKey) n++;
    return n;
  }

  /** Cancels the session's sub-agents; returns how many. */
  cancelSession(sessionKey: string): number {
    let n = 0;
    for (const r of this.running.values()) {
      if (r.sessionKey !== sessionKey) continue;
      r.abort.abort();
      n++;
    }
    return n;
  }

  cancelAll(): void {
    for (const r of this.running.values()) r.abort.abort();
  }

  /** The `spawn` tool for one turn of `origin`, running sub-agents with `profile`'s model and tools. */
  createSpawnTool(profile: AgentProfile, origin: SubagentOrigin): Tool {
    return defineTool({
      name: "spawn",
      description:
        "Start a sub-agent that works on a task in the background with its own tools. By default returns at " +
        "once and the result is reported back to this conversation when ready; set wait=true to wait for the result.",
      schema: spawnSchema,
      run: async (args) => {
        const label = args.label ?? args.task.slice(0, 40);
        const run = this.start(profile, origin, args.task, label);
        if (args.wait) {
          const result = await run.done;
          return result.status === "completed" ? result.content : `Sub-agent "${label}" ${result.status}: ${result.content}`;
        }
        run.done.then(
          (result) => this.options.onResult(result),
          (err: unknown) => this.options.logger.error("sub-agent delivery failed", { error: errorMessage(err) }),
        );
        return `Started sub-agent "${label}" (${run.id}). Its result will be reported back here when it finishes.`;
      },
    });
  }

  private start(profile: AgentProfile, origin: SubagentOrigin, task: string, label: string): { id: string; done: Promise<SubagentResult> } {
    const id = newId("sub");
    const abort = new AbortController();
    this.running.set(id, { id, sessionKey: origin.sessionKey, abort });
    const base = { id, label, task, origin };
    // Spawned inside a chat-with sub-agent, the run keeps that session's agent chain alive, so
    // the chat-with calls it makes are still checked for cycles and depth after the turn ends.
    const releaseChain = holdSubagentSession(origin.sessionKey);
    const done = (async (): Promise<SubagentResult> => {
      let release: (() => void) | undefined;
      try {
        release = await this.gate.acquire(abort.signal);
        const excluded = new Set<string>(SUBAGENT_EXCLUDED_TOOLS);
        const result = await runAgent(
          {
            model: profile.model,
            messages: [systemMessage(`${SUBAGENT_PROMPT}\nWorkspace: ${this.options.workspace}`), userMessage(task)],
            tools: profile.tools.filter((t) => !excluded.has(t.name)),
            maxToolIterations: profile.maxToolIterations,
            maxToolResultChars: profile.maxToolResultChars,
            contextWindow: profile.contextWindow,
            maxTokens: profile.maxTokens,
            omitMaxTokens: profile.omitMaxTokens,
            temperature: profile.temperature,
            workspace: this.options.workspace,
            sessionKey: origin.sessionKey,
            failOnToolError: this.options.failOnToolError,
            log: (level, msg, data) => this.options.logger[level](msg, { subagent: id, ...data }),
          },
          abort.signal,
        ).result();
        if (result.stopReason === "aborted") return { ...base, status: "stopped", content: "stopped before it finished" };
        if (result.stopReason === "error") return { ...base, status: "failed", content: errorMessage(result.error) };
        if (result.stopReason === "tool_error") return { ...base, status: "failed", content: partialProgress(result.newMessages) };
        return { ...base, status: "completed", content: result.content };
      } catch (err) {
        return isAbortError(err) ? { ...base, status: "stopped", content: "stopped before it finished" } : { ...base, status: "failed", content: errorMessage(err) };
      } finally {
        release?.();
        releaseChain();
        this.running.delete(id);
      }
    })();
    return { id, done };
  }
}

/** How many of a stopped sub-agent's successful tool calls its report lists (the latest ones). */
const REPORTED_STEPS = 3;
const STEP_DETAIL_CHARS = 120;

/** A sub-agent stopped by a failing tool: its last completed steps and the failure, one line each. */
function partialProgress(messages: readonly Message[]): string {
  const line = (m: ToolMessage): string => `- ${m.toolName}: ${textOf(m).replace(/\s+/g, " ").trim().slice(0, STEP_DETAIL_CHARS)}`;
  const results = messages.filter((m): m is ToolMessage => m.role === "tool");
  const completed = results.filter((m) => !m.isError).slice(-REPORTED_STEPS);
  const failure = results.findLast((m) => m.isError);
  const parts: string[] = [];
  if (completed.length > 0) parts.push(["Completed steps:", ...completed.map(line)].join("\n"));
  if (failure) parts.push(["Failure:", line(failure)].join("\n"));
  return parts.join("\n\n");
}

/** The text injected into the origin session for a finished sub-agent. */
export function subagentNotice(result: SubagentResult): string {
  return `[Sub-agent "${result.label}" ${result.status}]\nTask: ${result.task}\nResult:\n${result.content}`;
}
