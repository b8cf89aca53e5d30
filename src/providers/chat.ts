/**
 * OpenAI Chat Completions adapter — also every OpenAI-compatible server (OpenRouter, DeepSeek,
 * Groq, Ollama, vLLM, …). Always streams; `complete()` drains the stream.
 */
import type { EventSourceMessage } from "eventsource-parser";
import { EventStream } from "../core/event-stream.js";
import { ProviderError } from "../core/errors.js";
import type { LLMRequest, ModelEvent, ModelResponse, ModelStream } from "../core/llm.js";
import { modelErrorEvent } from "../core/llm.js";
import type { FinishReason, Usage } from "../core/messages.js";
import { isStableWireForm, toChatMessages } from "./chat-messages.js";
import { mapStreamError } from "./error-mapping.js";
import { joinUrl, parseEventData, readSse } from "./http.js";
import { JsonItems, JsonList, stableWireForm } from "./json-body.js";
import { ResponseBuilder } from "./response-builder.js";
import { ThinkSplitter } from "./think-splitter.js";
import { applyToolExtensions } from "./tool-extensions.js";
import type { Piece } from "./think-splitter.js";
import type { ModelTarget } from "./types.js";
import { num } from "./numbers.js";

/** OpenAI's reasoning models reject `temperature` and `max_tokens`. */
const OPENAI_REASONING_MODEL = /^(o\d|gpt-5)/;

export function buildChatBody(target: ModelTarget, request: LLMRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: target.model,
    messages: new JsonItems(toChatMessages(request.messages, target), isStableWireForm),
    stream: true,
    stream_options: { include_usage: true },
  };
  const reasoningModel = target.provider === "openai" && OPENAI_REASONING_MODEL.test(target.model);
  if (request.maxTokens !== undefined) body[target.provider === "openai" ? "max_completion_tokens" : "max_tokens"] = request.maxTokens;
  if (request.temperature !== undefined && !reasoningModel) body.temperature = request.temperature;
  if (request.topP !== undefined && !reasoningModel) body.top_p = request.topP;
  if (request.reasoningEffort) body.reasoning_effort = request.reasoningEffort;
  if (request.tools?.length) {
    body.tools = new JsonList(
      request.tools.map((t) =>
        stableWireForm("chat", t, () =>
          applyToolExtensions({ type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } } as Record<string, unknown>, t),
        ),
      ),
    );
    const choice = request.toolChoice;
    if (choice) body.tool_choice = typeof choice === "string" ? choice : { type: "function", function: { name: choice.name } };
  }
  if (request.output) {
    body.response_format = {
      type: "json_schema",
      json_schema: { name: request.output.name ?? "final_answer", schema: request.output.schema, strict: true },
    };
  }
  return body;
}

function authHeaders(target: ModelTarget): Record<string, string> {
  return { ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}), ...target.headers };
}

export function mapChatFinish(reason: unknown): FinishReason | undefined {
  switch (reason) {
    case "stop":
    case "end_turn":
      return "stop";
    case "length":
    case "max_tokens":
      return "length";
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    case "content_filter":
      return "content_filter";
    case null:
    case undefined:
      return undefined;
    default:
      return "stop";
  }
}


export function mapChatUsage(raw: Record<string, unknown>): Usage {
  const prompt = (raw.prompt_tokens_details ?? {}) as Record<string, unknown>;
  const completion = (raw.completion_tokens_details ?? {}) as Record<string, unknown>;
  const usage: Usage = { promptTokens: num(raw.prompt_tokens), completionTokens: num(raw.completion_tokens) };
  // DeepSeek reports cache hits as prompt_cache_hit_tokens.
  const cached = num(prompt.cached_tokens) || num(raw.prompt_cache_hit_tokens);
  if (cached) usage.cachedTokens = cached;
  if (num(completion.reasoning_tokens)) usage.reasoningTokens = num(completion.reasoning_tokens);
  return usage;
}

function emitPieces(out: ResponseBuilder, pieces: readonly Piece[]): void {
  for (const piece of pieces) {
    if (piece.kind === "text") out.text(piece.text);
    else out.reasoning(piece.text);
  }
}

interface PendingCall {
  id?: string;
  name: string;
  args: string;
}

interface ChatDelta {
  content?: unknown;
  reasoning_content?: unknown;
  reasoning?: unknown;
  tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }>;
}

/**
 * One streamed Chat Completions answer as it is read: the SSE loop hands each event here. Kept
 * apart from the loop so the async function TurboFan compiles stays small.
 */
class ChatStreamReader {
  private readonly think = new ThinkSplitter();
  private readonly calls = new Map<number, PendingCall>();
  private lastIndex: number | undefined;
  sawDone = false;

  constructor(
    private readonly target: ModelTarget,
    private readonly out: ResponseBuilder,
  ) {}

  /** Takes one event; false once the stream said `[DONE]`. */
  read(message: EventSourceMessage): boolean {
    if (message.data.trim() === "[DONE]") {
      this.sawDone = true;
      return false;
    }
    const { target, out } = this;
    const chunk = parseEventData(target, message);
    if (!chunk) return true;
    if (chunk.error) throw mapStreamError(chunk, { provider: target.provider, model: target.model, streamed: out.streamed });
    if (chunk.usage && typeof chunk.usage === "object") out.setUsage(mapChatUsage(chunk.usage as Record<string, unknown>));
    const choice = Array.isArray(chunk.choices) ? (chunk.choices[0] as Record<string, unknown> | undefined) : undefined;
    if (!choice) return true;
    const delta = (choice.delta ?? choice.message ?? {}) as ChatDelta;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string") out.reasoning(reasoning);
    if (typeof delta.content === "string") emitPieces(out, this.think.push(delta.content));
    const toolCalls = delta.tool_calls;
    if (toolCalls) for (let i = 0; i < toolCalls.length; i++) this.addCallDelta(toolCalls[i]!);
    const finish = mapChatFinish(choice.finish_reason);
    if (finish) out.setFinish(finish);
    return true;
  }

  private addCallDelta(tc: NonNullable<ChatDelta["tool_calls"]>[number]): void {
    const index = tc.index ?? this.lastIndex ?? 0;
    // Parallel calls arrive one after another: a new index closes the earlier ones.
    if (this.lastIndex !== undefined && index > this.lastIndex) this.closeCallsBefore(index);
    this.lastIndex = index;
    const call = this.calls.get(index) ?? { name: "", args: "" };
    if (tc.id) call.id = tc.id;
    if (tc.function?.name) call.name += tc.function.name;
    if (tc.function?.arguments) call.args += tc.function.arguments;
    this.calls.set(index, call);
  }

  private closeCallsBefore(index: number | undefined): void {
    for (const [i, call] of [...this.calls].sort((a, b) => a[0] - b[0])) {
      if (index !== undefined && i >= index) continue;
      this.out.toolCall(call.id, call.name, call.args);
      this.calls.delete(i);
    }
  }

  /** After the last event: flushes held text and open calls; the response, or why there is none. */
  end(): ModelResponse {
    const { target, out } = this;
    emitPieces(out, this.think.flush());
    this.closeCallsBefore(undefined);
    if (!out.finishReason && !this.sawDone) {
      throw new ProviderError(`${target.provider} stream ended before a finish reason`, {
        kind: "connection",
        provider: target.provider,
        model: target.model,
        streamed: out.streamed,
      });
    }
    return out.build();
  }
}

export const streamChat = (target: ModelTarget, request: LLMRequest, signal?: AbortSignal): ModelStream =>
  EventStream.run<ModelEvent, ModelResponse>(modelErrorEvent, async (stream) => {
    const out = new ResponseBuilder(stream, target);
    const reader = new ChatStreamReader(target, out);
    const req = { url: joinUrl(target.baseURL, "chat/completions"), headers: authHeaders(target), body: buildChatBody(target, request) };
    await readSse(target, req, signal, out, (message) => reader.read(message));
    return reader.end();
  });
