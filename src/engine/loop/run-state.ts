/**
 * The mutable state of one run and the small operations on it (recording messages, usage,
 * checkpoints, injections, the result). The loop itself lives in run-agent.ts.
 */
import type { AgentEvent, Checkpoint, CheckpointPhase, RunResult } from "../../core/events.js";
import { errorMessage } from "../../core/errors.js";
import type { LanguageModel, ToolDefinition } from "../../core/llm.js";
import type { Message, StopReason, ToolCallPart, Usage } from "../../core/messages.js";
import type { ToolRegistry } from "../../tools/registry.js";
import type { HookContext, HookRunner } from "../hooks.js";
import type { LookupGuard } from "../tool-execution/lookup-guard.js";
import type { TokenEstimator } from "../tokens/estimator.js";
import type { AgentSpec, Clock, EngineLog } from "../types.js";
import { MAX_INJECTION_CYCLES, MAX_INJECTIONS_PER_DRAIN } from "./endings.js";

export interface RunSettings {
  maxToolIterations: number;
  maxToolResultChars: number;
  contextWindow: number;
  maxTokens: number;
  budget: number;
  toolTimeoutMs: number;
}

export interface RunState {
  readonly runId: string;
  readonly spec: AgentSpec;
  /** Replaced when a hook changes the agent's model between rounds (a Go `config` hook). */
  model: LanguageModel;
  readonly settings: RunSettings;
  /** Replaced when a hook changes the agent's tools between rounds. */
  registry: ToolRegistry;
  toolDefs: ToolDefinition[];
  /** Tool names refused with a reason instead of "not found"; a hook may add to them between rounds. */
  refused: Readonly<Record<string, string>> | undefined;
  readonly hooks: HookRunner;
  readonly estimator: TokenEstimator;
  readonly clock: Clock;
  readonly guard: LookupGuard;
  readonly signal: AbortSignal | undefined;
  readonly emit: (event: AgentEvent) => void;
  readonly log: EngineLog;
  /** The history the run works on: the spec's messages, then everything added. */
  working: Message[];
  /** Where this turn's input starts in `working` (kept verbatim by compaction). */
  turnStart: number;
  newMessages: Message[];
  archived: Message[];
  toolsUsed: Set<string>;
  usage: Usage;
  /** LLM calls made. */
  iterations: number;
  /** Rounds of tool calls executed. */
  toolRounds: number;
  injectionCycles: number;
  injectionBacklog: Message[];
  /** Provider-reported minus estimated prompt tokens of the previous call. */
  adjustment: number;
  compactionFailed: boolean;
  writtenFiles: Set<string>;
}

export function hookContext(state: RunState): HookContext {
  return { runId: state.runId, iteration: state.iterations };
}

export function warn(state: RunState, message: string, data?: Record<string, unknown>): void {
  state.log("warn", message, data);
  state.emit({ type: "warning", message });
}

export function addMessage(state: RunState, message: Message): void {
  state.working.push(message);
  state.newMessages.push(message);
}

export function addUsage(state: RunState, usage: Usage): void {
  const t = state.usage;
  t.promptTokens += usage.promptTokens;
  t.completionTokens += usage.completionTokens;
  if (usage.cachedTokens) t.cachedTokens = (t.cachedTokens ?? 0) + usage.cachedTokens;
  if (usage.cacheWriteTokens) t.cacheWriteTokens = (t.cacheWriteTokens ?? 0) + usage.cacheWriteTokens;
  if (usage.reasoningTokens) t.reasoningTokens = (t.reasoningTokens ?? 0) + usage.reasoningTokens;
  state.emit({ type: "usage", usage, total: { ...t } });
}

export function checkpoint(
  state: RunState,
  phase: CheckpointPhase,
  extra: Omit<Checkpoint, "phase" | "iteration" | "newMessages"> = {},
): Promise<void> {
  const cp: Checkpoint = { phase, iteration: state.iterations, newMessages: state.newMessages.slice(), ...extra };
  state.emit({ type: "checkpoint", checkpoint: cp });
  const save = state.spec.onCheckpoint;
  return save ? saveCheckpoint(state, save, cp) : Promise.resolve();
}

async function saveCheckpoint(state: RunState, save: (cp: Checkpoint) => unknown, cp: Checkpoint): Promise<void> {
  try {
    await save(cp);
  } catch (err) {
    warn(state, `checkpoint callback failed at ${cp.phase}: ${errorMessage(err)}`);
  }
}

/**
 * Pulls injected messages (≤ 3 per drain, ≤ 5 drains per run) and appends them. Extra
 * messages a callback returns beyond the limit wait for the next drain.
 */
export async function drainInjections(state: RunState): Promise<boolean> {
  const drain = state.spec.drainInjections;
  if (state.injectionCycles >= MAX_INJECTION_CYCLES) return false;
  let incoming: Message[] = [];
  if (drain) {
    try {
      incoming = await drain(MAX_INJECTIONS_PER_DRAIN);
    } catch (err) {
      warn(state, `injection callback failed: ${errorMessage(err)}`);
    }
  }
  const queue = [...state.injectionBacklog, ...incoming];
  if (queue.length === 0) return false;
  state.injectionCycles++;
  const taken = queue.slice(0, MAX_INJECTIONS_PER_DRAIN);
  state.injectionBacklog = queue.slice(MAX_INJECTIONS_PER_DRAIN);
  for (const m of taken) addMessage(state, { ...m, meta: { ...m.meta, injected: true } });
  return true;
}

export function buildResult(
  state: RunState,
  stopReason: StopReason,
  content: string,
  extra: { error?: unknown; externalToolCalls?: ToolCallPart[] } = {},
): RunResult {
  if (state.injectionBacklog.length > 0) {
    warn(state, `${state.injectionBacklog.length} injected message(s) were not delivered: the injection limit was reached`);
  }
  return {
    content,
    newMessages: state.newMessages,
    toolsUsed: [...state.toolsUsed],
    usage: { ...state.usage },
    stopReason,
    iterations: state.iterations,
    ...(state.archived.length > 0 ? { archivedMessages: state.archived } : {}),
    ...(extra.error !== undefined ? { error: extra.error } : {}),
    ...(extra.externalToolCalls ? { externalToolCalls: extra.externalToolCalls } : {}),
  };
}
