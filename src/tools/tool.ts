/**
 * The tool contract. A tool is a name, a description written for the model, JSON-schema
 * parameters, safety flags and an `execute` that returns content (never throws on purpose:
 * a thrown error becomes an `isError` result in the engine).
 */
import type { JsonSchema, ToolDefinition } from "../core/llm.js";
import type { ToolResultContentPart } from "../core/messages.js";

export interface ToolContext {
  /** The id of the call being executed. */
  callId: string;
  /** Session key when run inside a session (`cli:direct`, `api:x`, …). */
  sessionKey?: string;
  /** Identifies the current turn; per-turn tool state (e.g. repeated workspace violations) keys on it. */
  turnId?: string;
  /** Working directory for file and exec tools. */
  workspace: string;
  /** Where large outputs are written (`<home>/sessions/<id>/truncated-outputs`). */
  outputDir?: string;
  /** Reports progress of a long call; surfaces as a `tool_progress` event. */
  progress?: (progress: number, total?: number, message?: string) => void;
}

/** What a tool returns: plain text, or parts with an error flag. */
export type ToolOutput =
  | string
  | {
      content: ToolResultContentPart[];
      isError?: boolean;
      /** Never truncate this result (Go nanobot's `skip-truncation` meta). */
      skipTruncation?: boolean;
      structuredContent?: unknown;
      /**
       * The tool already delivered the turn's answer to the user (the `message` tool): the
       * product layer must not also send the final assistant reply of this turn.
       */
      suppressFinalReply?: boolean;
    };

export interface Tool<Args = Record<string, unknown>> {
  name: string;
  description: string;
  parameters: JsonSchema;
  /** Has no side effects; consecutive read-only, non-exclusive tools run concurrently. */
  readOnly?: boolean;
  /** Must run alone even when read-only (e.g. exec). */
  exclusive?: boolean;
  /** Executed by the caller, not by nanobot: the run ends with stop reason `external_tool`. */
  external?: boolean;
  /** Per-call time limit in ms (engine default applies when unset). */
  timeoutMs?: number;
  execute(args: Args, ctx: ToolContext, signal: AbortSignal): Promise<ToolOutput>;
}

/** Safe to run concurrently with its neighbours. */
export function isConcurrencySafe(tool: Pick<Tool, "readOnly" | "exclusive">): boolean {
  return tool.readOnly === true && tool.exclusive !== true;
}

export function toToolDefinition(tool: Tool<never>): ToolDefinition {
  return { name: tool.name, description: tool.description, parameters: tool.parameters };
}
