/**
 * The events one agent run emits, in order: `turn_start`, then per iteration `llm_request`,
 * deltas, `tool_call`/`tool_result`, `checkpoint`s, and finally `turn_end` (or `error`).
 */
import type { EventStream } from "./event-stream.js";
import type { AssistantMessage, Message, StopReason, ToolCallPart, ToolMessage, Usage } from "./messages.js";

/** Where a run is when it persists progress; the product layer saves at each one. */
export type CheckpointPhase = "awaiting_tools" | "tools_completed" | "final_response";

export interface Checkpoint {
  phase: CheckpointPhase;
  iteration: number;
  /** All messages the run added so far (assistant + tool results), in order. */
  newMessages: Message[];
  /** The assistant message whose tool calls are being run, when `awaiting_tools`. */
  assistant?: AssistantMessage;
  /** Results already completed in this round. */
  completedResults?: ToolMessage[];
  /** Tool calls still pending in this round. */
  pendingToolCalls?: ToolCallPart[];
}

export type AgentEvent =
  | { type: "turn_start"; runId: string; model: string; provider: string }
  | { type: "llm_request"; iteration: number; messageCount: number; estimatedTokens: number; toolCount: number }
  | { type: "text_delta"; delta: string }
  | { type: "reasoning_delta"; delta: string }
  | { type: "tool_call"; toolCall: ToolCallPart }
  | { type: "tool_progress"; toolCallId: string; progress: number; total?: number; message?: string }
  | { type: "tool_result"; result: ToolMessage; durationMs: number }
  | { type: "usage"; usage: Usage; total: Usage }
  | { type: "compaction"; kind: "summary" | "microcompact" | "snip"; before: number; after: number; summary?: string }
  | { type: "retry_wait"; attempt: number; delayMs: number; error: string }
  | { type: "checkpoint"; checkpoint: Checkpoint }
  | { type: "warning"; message: string }
  | { type: "turn_end"; result: RunResult }
  | { type: "error"; error: unknown };

/** What a run produced. */
export interface RunResult {
  /** The final answer text ("" when the run ended without one). */
  content: string;
  /** Every message the run added (assistant messages, tool results, injected user messages). */
  newMessages: Message[];
  /** Names of the tools called, in first-use order, without duplicates. */
  toolsUsed: string[];
  usage: Usage;
  stopReason: StopReason;
  iterations: number;
  /** Messages replaced by a summary during the run, kept for the caller to archive. */
  archivedMessages?: Message[];
  /** Set when `stopReason` is `error`. */
  error?: unknown;
  /** Tool calls left for the caller when `stopReason` is `external_tool`. */
  externalToolCalls?: ToolCallPart[];
}

export type AgentStream = EventStream<AgentEvent, RunResult>;

export const agentErrorEvent = (error: unknown): AgentEvent => ({ type: "error", error });
