/**
 * OpenAI Chat Completions wire objects, built from a turn's reply. Field order and shape follow
 * what api.openai.com sends (see shared/fixtures/llm/openai-chat-stream-text-usage.sse), so
 * any OpenAI client parses them.
 */
import { randomSuffix } from "../core/ids.js";
import type { StopReason, ToolCallPart, Usage } from "../core/messages.js";

export type OpenAIFinishReason = "stop" | "length" | "tool_calls" | "content_filter";

export interface OpenAIUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** A call of one of the client's own tools, handed back to it. */
export interface OpenAIToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export function toOpenAIToolCalls(calls: readonly ToolCallPart[]): OpenAIToolCall[] {
  return calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.rawArguments || JSON.stringify(c.arguments) } }));
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: Array<{
    index: 0;
    message: { role: "assistant"; content: string | null; refusal: null; tool_calls?: OpenAIToolCall[] };
    logprobs: null;
    finish_reason: OpenAIFinishReason;
  }>;
  usage: OpenAIUsage;
  /** nanobot's own: what the user should know about the turn (e.g. their message was cut to fit). */
  nanobot_warnings?: string[];
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: Array<{
    index: 0;
    delta: { role?: "assistant"; content?: string; refusal?: null; tool_calls?: Array<OpenAIToolCall & { index: number }> };
    logprobs: null;
    finish_reason: OpenAIFinishReason | null;
  }>;
  usage?: OpenAIUsage;
  /** nanobot's own, on the last chunk only: see `ChatCompletion.nanobot_warnings`. */
  nanobot_warnings?: string[];
}

/** `chatcmpl-` + 29 random characters, like OpenAI's ids. */
export function completionId(): string {
  return `chatcmpl-${randomSuffix(29)}`;
}

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

export function toOpenAIUsage(usage: Usage): OpenAIUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** A turn that ran out of room or iterations was cut short: OpenAI calls that `length`. */
export function finishReasonFor(stop: StopReason): OpenAIFinishReason {
  if (stop === "external_tool") return "tool_calls";
  return stop === "length" || stop === "max_iterations" ? "length" : "stop";
}

export interface CompletionMeta {
  id: string;
  created: number;
  model: string;
}

export function completionObject(
  meta: CompletionMeta,
  content: string,
  finish: OpenAIFinishReason,
  usage: Usage,
  toolCalls: readonly ToolCallPart[] = [],
): ChatCompletion {
  const message: ChatCompletion["choices"][number]["message"] =
    toolCalls.length > 0
      ? { role: "assistant", content: content === "" ? null : content, refusal: null, tool_calls: toOpenAIToolCalls(toolCalls) }
      : { role: "assistant", content, refusal: null };
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
    usage: toOpenAIUsage(usage),
  };
}

function chunk(meta: CompletionMeta, delta: ChatCompletionChunk["choices"][number]["delta"], finish: OpenAIFinishReason | null): ChatCompletionChunk {
  return {
    id: meta.id,
    object: "chat.completion.chunk",
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  };
}

/** The first chunk: the role, with empty content. */
export const roleChunk = (meta: CompletionMeta): ChatCompletionChunk => chunk(meta, { role: "assistant", content: "", refusal: null }, null);

export const contentChunk = (meta: CompletionMeta, content: string): ChatCompletionChunk => chunk(meta, { content }, null);

/** The client's tool calls, whole, in one chunk (each with its `index`, as OpenAI streams them). */
export const toolCallsChunk = (meta: CompletionMeta, calls: readonly ToolCallPart[]): ChatCompletionChunk =>
  chunk(meta, { tool_calls: toOpenAIToolCalls(calls).map((c, index) => ({ index, ...c })) }, null);

/** The last choice chunk: empty delta, the finish reason. */
export const finishChunk = (meta: CompletionMeta, finish: OpenAIFinishReason): ChatCompletionChunk => chunk(meta, {}, finish);

/** Sent after the finish chunk when `stream_options.include_usage` is set: no choices, the usage. */
export function usageChunk(meta: CompletionMeta, usage: Usage): ChatCompletionChunk {
  return { id: meta.id, object: "chat.completion.chunk", created: meta.created, model: meta.model, choices: [], usage: toOpenAIUsage(usage) };
}

/**
 * The turn's warnings as the non-standard top-level `nanobot_warnings` field, only when there
 * are any: OpenAI clients ignore fields they do not know, so the response stays compatible.
 */
export function withWarnings<T extends ChatCompletion | ChatCompletionChunk>(body: T, warnings: readonly string[]): T {
  return warnings.length > 0 ? { ...body, nanobot_warnings: [...warnings] } : body;
}
