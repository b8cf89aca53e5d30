/**
 * What slash commands may do to the running loop: stop a session's work, report its status,
 * run Dream, restart. Kept apart from the AgentLoop so commands see a small surface.
 */
import { runDream } from "../memory/dream.js";
import type { DreamResult } from "../memory/dream.js";
import type { Skill } from "../memory/skills.js";
import type { CommandHost, CommandRegistry } from "./commands/registry.js";
import type { ContextBuilder } from "./context-builder.js";
import type { Runtime } from "./runtime.js";
import { abortedReply } from "./session-lanes.js";
import type { SessionLanes } from "./session-lanes.js";
import type { SubagentManager } from "./subagents.js";

export interface LoopHostDeps {
  runtime: Runtime;
  commands: CommandRegistry;
  context: ContextBuilder;
  subagents: SubagentManager;
  lanes: SessionLanes;
  startedAt: number;
  now: () => number;
  onRestart?: () => void | Promise<void>;
}

export class LoopHost implements CommandHost {
  readonly runtime: Runtime;
  readonly commands: CommandRegistry;

  constructor(private readonly deps: LoopHostDeps) {
    this.runtime = deps.runtime;
    this.commands = deps.commands;
  }

  stopSession(sessionKey: string): number {
    let stopped = this.deps.subagents.cancelSession(sessionKey);
    const lane = this.deps.lanes.get(sessionKey);
    if (lane) {
      for (const item of lane.queue.splice(0)) {
        item.resolve(abortedReply(item));
        stopped++;
      }
      if (lane.active && !lane.active.abort.signal.aborted) {
        lane.active.abort.abort();
        stopped++;
      }
    }
    return stopped;
  }

  async statusText(sessionKey: string, agent?: string): Promise<string> {
    const store = this.runtime.store();
    const session = await store.getSession(sessionKey);
    const meta = session?.metadata ?? {};
    const preset = typeof meta.modelPreset === "string" ? meta.modelPreset : undefined;
    const profile = await this.runtime.resolveAgent(agent, preset ? { modelPreset: preset } : {});
    const usage = (meta.usage ?? {}) as { promptTokens?: number; completionTokens?: number };
    const context = typeof meta.lastContextTokens === "number" ? meta.lastContextTokens : 0;
    const pct = profile.contextWindow > 0 ? Math.round((context / profile.contextWindow) * 100) : 0;
    const lane = this.deps.lanes.get(sessionKey);
    return [
      `Model: ${profile.modelRef}${preset ? ` (preset ${preset})` : ""}`,
      `Tokens: ${usage.promptTokens ?? 0} in / ${usage.completionTokens ?? 0} out`,
      `Context: ~${context} of ${profile.contextWindow} tokens (${pct}%)`,
      `Messages: ${session?.messageCount ?? 0}`,
      `Running: ${lane?.active ? "yes" : "no"}, queued: ${lane?.queue.length ?? 0}, sub-agents: ${this.deps.subagents.count(sessionKey)}`,
      `Uptime: ${formatDuration(this.deps.now() - this.deps.startedAt)}`,
    ].join("\n");
  }

  async runDream(signal?: AbortSignal): Promise<DreamResult> {
    // dream.modelOverride (the Python key; also `model`): a modelPresets name Dream runs on.
    const dream = this.runtime.config.agents.defaults.dream;
    const preset = dream?.modelOverride ?? dream?.model;
    const profile = await this.runtime.resolveAgent(undefined, preset ? { modelPreset: preset } : {});
    // The preset's (or the defaults') window, max tokens, temperature and effort, as Python's
    // dream runtime carries the preset's generation settings.
    // A Go agent on the Responses API sends no output limit of its own (omitMaxTokens), nor does its Dream.
    const { maxTokens, temperature, reasoningEffort, contextWindow, omitMaxTokens } = profile;
    return runDream({
      workspace: this.runtime.workspace,
      model: profile.model,
      settings: { maxTokens, temperature, contextWindow, ...(reasoningEffort ? { reasoningEffort } : {}), ...(omitMaxTokens ? { omitMaxTokens } : {}) },
      logger: this.runtime.logger,
      ...(signal ? { signal } : {}),
    });
  }

  async restart(): Promise<string> {
    const onRestart = this.deps.onRestart;
    if (!onRestart) return "Restart is not available here; restart the nanobot process instead.";
    // Answer first; the restart happens once the reply is on its way.
    setTimeout(() => {
      Promise.resolve(onRestart()).catch((error: unknown) => this.runtime.logger.error("restart failed", { error: String(error) }));
    }, 0);
    return "Restarting…";
  }

  skills(): Skill[] {
    return this.deps.context.skills();
  }
}

export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const parts = h > 0 ? [`${h}h`, `${m}m`] : m > 0 ? [`${m}m`] : [];
  return [...parts, `${s % 60}s`].join(" ");
}
