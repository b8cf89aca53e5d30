/**
 * The seam between the engine and the providers: a provider-neutral request, the events a
 * model stream emits, and the response it ends with.
 */
import type { EventStream } from "./event-stream.js";
import type { AssistantMessage, FinishReason, Message, ToolCallPart, Usage } from "./messages.js";

/** A JSON Schema object (draft 2020-12 subset as the providers accept it). */
export type JsonSchema = { [key: string]: unknown };

/** A tool as the model sees it. */
export interface ToolDefinition {
  name: string;
  description: string;
  /** Always `{ type: "object", properties: {...}, ... }` once it reaches a provider. */
  parameters: JsonSchema;
  /**
   * Go nanobot `toolExtensions`: keys merged into the provider's wire form of this tool
   * (`remove: [key…]` deletes keys; a `type` other than function/custom drops description and
   * schema, for provider-defined tools). See providers/tool-extensions.ts.
   */
  extensions?: Record<string, unknown>;
}

export type ToolChoice = "auto" | "none" | "required" | { name: string };

export type ReasoningEffort = "minimal" | "low" | "medium" | "high";

/** A provider-neutral LLM request. System messages may appear anywhere; adapters hoist them. */
export interface LLMRequest {
  messages: Message[];
  tools?: ToolDefinition[];
  toolChoice?: ToolChoice;
  maxTokens?: number;
  temperature?: number;
  /** Nucleus sampling (Go `topP`). */
  topP?: number;
  reasoningEffort?: ReasoningEffort;
  /** Reasoning summary the Responses API should return (Go `reasoning.summary`: auto, concise, detailed). */
  reasoningSummary?: string;
  /** Responses API context truncation (Go `truncation`: auto, disabled). */
  truncation?: string;
  /** Structured output: the final answer must be JSON matching this schema. */
  output?: { name?: string; schema: JsonSchema };
  /** Opaque per-request data for hooks and logging; never sent to the provider. */
  metadata?: Record<string, unknown>;
}

/** Events a model stream emits while it runs. Failures end the stream with `error`. */
export type ModelEvent =
  | { type: "start"; provider: string; model: string }
  | { type: "text_delta"; delta: string }
  | { type: "reasoning_delta"; delta: string }
  /** A tool call whose arguments are complete (emitted as soon as the call is closed). */
  | { type: "tool_call"; toolCall: ToolCallPart }
  | { type: "usage"; usage: Usage }
  /** The provider layer is about to wait before retrying. */
  | { type: "retry_wait"; attempt: number; delayMs: number; error: string }
  /** The provider layer switched to a fallback model. */
  | { type: "fallback"; from: string; to: string; error: string }
  | { type: "error"; error: unknown };

/** The complete answer of one model call. */
export interface ModelResponse {
  message: AssistantMessage;
  finishReason: FinishReason;
  usage: Usage;
  provider: string;
  model: string;
}

export type ModelStream = EventStream<ModelEvent, ModelResponse>;

/**
 * A model bound to a provider: what the engine calls. `stream()` never throws; failures end
 * the stream (its `result()` rejects with a `ProviderError`). `complete()` is `stream()` drained.
 */
export interface LanguageModel {
  readonly provider: string;
  readonly model: string;
  /** Context window in tokens, when known from config or the provider's catalogue. */
  readonly contextWindow?: number;
  stream(request: LLMRequest, signal?: AbortSignal): ModelStream;
}

export const modelErrorEvent = (error: unknown): ModelEvent => ({ type: "error", error });

/** Drains a model stream: one code path for streaming and non-streaming callers. */
export function complete(model: LanguageModel, request: LLMRequest, signal?: AbortSignal): Promise<ModelResponse> {
  return model.stream(request, signal).result();
}
