/**
 * The engine's inputs: one `AgentSpec` per run. Everything with side effects (clock, files,
 * persistence, injected messages) arrives through a seam here, so the loop stays a library.
 */
import type { Checkpoint } from "../core/events.js";
import type { Clock } from "../core/clock.js";
import type { JsonSchema, LanguageModel, ReasoningEffort, ToolChoice } from "../core/llm.js";
import type { Message } from "../core/messages.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/tool.js";
import type { AgentHooks } from "./hooks.js";
import type { TokenEstimator } from "./tokens/estimator.js";

export type LogLevel = "debug" | "info" | "warn" | "error";
export type EngineLog = (level: LogLevel, msg: string, data?: Record<string, unknown>) => void;

export type { Clock } from "../core/clock.js";
export { systemClock } from "../core/clock.js";

export const ENGINE_DEFAULTS = {
  maxToolIterations: 200,
  maxToolResultChars: 16_000,
  contextWindow: 200_000,
  maxTokens: 8_192,
  /** Tokens kept free besides `maxTokens` (provider framing, estimate error). */
  budgetReserve: 1_024,
  toolTimeoutMs: 120_000,
  hookTimeoutMs: 30_000,
} as const;

export interface AgentSpec {
  model: LanguageModel;
  /** History plus this turn's input. Never mutated. */
  messages: readonly Message[];
  /**
   * Index in `messages` where this turn's new input starts; compaction keeps it verbatim.
   * Defaults to the last user message.
   */
  newInputStart?: number;
  tools?: readonly Tool[] | ToolRegistry;
  /**
   * Tools the run does not offer and refuses by name, with the reason the model reads (a Go
   * agent's `permissions` deny them); any other unknown name is "not found".
   */
  refusedTools?: Readonly<Record<string, string>>;
  /** Forced on the first round only; later rounds let the model choose (else it loops). */
  toolChoice?: ToolChoice;
  temperature?: number;
  topP?: number;
  reasoningEffort?: ReasoningEffort;
  reasoningSummary?: string;
  truncation?: string;
  /** Go `toolExtensions`: tool name → keys merged into that tool's wire form. */
  toolExtensions?: Record<string, Record<string, unknown>>;
  output?: { name?: string; schema: JsonSchema };
  metadata?: Record<string, unknown>;
  /** Model calls before a forced no-tools finalization (200), counted as the Python nanobot counts its iterations. */
  maxToolIterations?: number;
  /** Tool results longer than this are offloaded to a file in the request copy (16,000). */
  maxToolResultChars?: number;
  /** Defaults to the model's `contextWindow`, else 200,000. 0 disables compaction. */
  contextWindow?: number;
  /** Output token limit per call (8,192). */
  maxTokens?: number;
  /** Send no output limit (the provider's own default); budgets still keep `maxTokens` free. */
  omitMaxTokens?: boolean;
  /** Replaces the computed governance budget (`contextWindow − maxTokens − 1024`). */
  contextBlockLimit?: number;
  /** End the run (`tool_error`) at the first tool call that fails, instead of letting the model recover. */
  failOnToolError?: boolean;
  /** Default per-tool time limit when the tool sets none (120 s). */
  toolTimeoutMs?: number;
  /**
   * The session's directory (e.g. `<home>/sessions/<id>`): oversized tool outputs go to its
   * `truncated-outputs/`, offloaded results to its `tool-results/`. Without it nothing is written.
   */
  outputDir?: string;
  /** Working directory handed to tools. Defaults to `process.cwd()`. */
  workspace?: string;
  sessionKey?: string;
  hooks?: AgentHooks | readonly AgentHooks[];
  /** A hook that has not settled after this long is reported and skipped (30 s). */
  hookTimeoutMs?: number;
  /** Awaited at `awaiting_tools`, `tools_completed` and `final_response`. */
  onCheckpoint?: (checkpoint: Checkpoint) => void | Promise<void>;
  /** Messages that arrived mid-turn (e.g. a user follow-up, a sub-agent result); ≤ `limit` are used. */
  drainInjections?: (limit: number) => Message[] | Promise<Message[]>;
  estimator?: TokenEstimator;
  clock?: Clock;
  log?: EngineLog;
}
