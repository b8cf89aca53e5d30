/**
 * Anthropic Messages adapter: thinking blocks (with signatures) kept for replay, prompt-cache
 * markers, and structured output as a forced tool whose input becomes the answer text.
 */
import { EventStream } from "../core/event-stream.js";
import { ProviderError } from "../core/errors.js";
import type { LLMRequest, ModelEvent, ModelResponse, ModelStream, ReasoningEffort } from "../core/llm.js";
import { modelErrorEvent } from "../core/llm.js";
import type { FinishReason, ReasoningPart, Usage } from "../core/messages.js";
import { toAnthropicMessages } from "./anthropic-messages.js";
import { mapStreamError } from "./error-mapping.js";
import { joinUrl, parseEventData, readSse } from "./http.js";
import { JsonList, stableWireForm } from "./json-body.js";
import { ResponseBuilder } from "./response-builder.js";
import { parseToolArguments } from "./tool-arguments.js";
import type { ModelTarget } from "./types.js";
import { num } from "./numbers.js";
import { applyToolExtensions } from "./tool-extensions.js";

export const ANTHROPIC_VERSION = "2023-06-01";
const DEFAULT_MAX_TOKENS = 8192;
const MIN_THINKING_BUDGET = 1024;
const THINKING_BUDGET: Record<ReasoningEffort, number> = { minimal: 1024, low: 2048, medium: 8192, high: 16384 };
const DEFAULT_OUTPUT_TOOL = "final_answer";

function outputToolName(request: LLMRequest): string | undefined {
  return request.output ? (request.output.name ?? DEFAULT_OUTPUT_TOOL) : undefined;
}

export function buildAnthropicBody(target: ModelTarget, request: LLMRequest): Record<string, unknown> {
  const { system, messages } = toAnthropicMessages(request.messages, target);
  const maxTokens = request.maxTokens ?? DEFAULT_MAX_TOKENS;
  const body: Record<string, unknown> = { model: target.model, max_tokens: maxTokens, messages, stream: true };
  if (system) body.system = system;
  const outputTool = outputToolName(request);
  // Forced tool use and extended thinking cannot be combined.
  const budget = request.reasoningEffort && !outputTool ? Math.min(THINKING_BUDGET[request.reasoningEffort], maxTokens - 1) : 0;
  if (budget >= MIN_THINKING_BUDGET) body.thinking = { type: "enabled", budget_tokens: budget };
  else if (request.temperature !== undefined) body.temperature = request.temperature;
  // Thinking also rejects a changed top_p.
  if (request.topP !== undefined && body.thinking === undefined) body.top_p = request.topP;
  const tools: Array<Record<string, unknown>> = (request.tools ?? []).map((t) =>
    stableWireForm("anthropic", t, () => applyToolExtensions({ name: t.name, description: t.description, input_schema: t.parameters } as Record<string, unknown>, t)),
  );
  if (request.output && outputTool) {
    const schema = request.output.schema;
    tools.push(stableWireForm(`anthropic-output:${outputTool}`, schema, () => ({ name: outputTool, description: "Give the final answer in the required structure.", input_schema: schema })));
  }
  const lastTool = tools.at(-1);
  if (lastTool) {
    // The prompt-cache breakpoint goes on a copy (wire forms are shared by every call), itself kept.
    tools[tools.length - 1] = stableWireForm("anthropic-cache-breakpoint", lastTool, () => ({ ...lastTool, cache_control: { type: "ephemeral" } }));
    body.tools = new JsonList(tools);
  }
  if (outputTool) {
    // With other tools present the model may still call them; it must end with the output tool.
    body.tool_choice = request.tools?.length ? { type: "any" } : { type: "tool", name: outputTool };
  } else if (request.toolChoice && request.tools?.length) {
    const c = request.toolChoice;
    body.tool_choice = c === "auto" ? { type: "auto" } : c === "none" ? { type: "none" } : c === "required" ? { type: "any" } : { type: "tool", name: c.name };
  }
  return body;
}

export function mapAnthropicStop(reason: unknown): FinishReason | undefined {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
    case "pause_turn":
      return "stop";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    case null:
    case undefined:
      return undefined;
    default:
      return "stop";
  }
}


/** Anthropic's `input_tokens` excludes cache reads and writes; ours includes them. */
function mapUsage(raw: Record<string, unknown>, previous: Usage): Usage {
  const has = (k: string) => typeof raw[k] === "number";
  const read = has("cache_read_input_tokens") ? num(raw.cache_read_input_tokens) : (previous.cachedTokens ?? 0);
  const write = has("cache_creation_input_tokens") ? num(raw.cache_creation_input_tokens) : (previous.cacheWriteTokens ?? 0);
  const prompt = has("input_tokens") ? num(raw.input_tokens) + read + write : previous.promptTokens;
  const usage: Usage = { promptTokens: prompt, completionTokens: has("output_tokens") ? num(raw.output_tokens) : previous.completionTokens };
  if (read) usage.cachedTokens = read;
  if (write) usage.cacheWriteTokens = write;
  return usage;
}

function anthropicUrl(base: string): string {
  return /\/v1\/?$/.test(base) ? joinUrl(base, "messages") : joinUrl(base, "v1/messages");
}

type Json = Record<string, unknown>;

interface OpenBlock {
  type: string;
  id?: string;
  name?: string;
  json: string;
  reasoning?: ReasoningPart;
}

export const streamAnthropic = (target: ModelTarget, request: LLMRequest, signal?: AbortSignal): ModelStream =>
  EventStream.run<ModelEvent, ModelResponse>(modelErrorEvent, async (stream) => {
    const out = new ResponseBuilder(stream, target);
    const outputTool = outputToolName(request);
    const blocks = new Map<number, OpenBlock>();
    const ctx = () => ({ provider: target.provider, model: target.model, streamed: out.streamed });
    let usage: Usage = { promptTokens: 0, completionTokens: 0 };
    let answeredByOutputTool = false;
    let finished = false;
    const headers = {
      "anthropic-version": ANTHROPIC_VERSION,
      ...(target.apiKey ? { "x-api-key": target.apiKey } : {}),
      ...target.headers,
    };
    const req = { url: anthropicUrl(target.baseURL), headers, body: buildAnthropicBody(target, request) };
    await readSse(target, req, signal, out, (message) => {
      const event = parseEventData(target, message);
      if (!event) return;
      const index = num(event.index);
      switch (event.type) {
        case "message_start":
          usage = mapUsage(((event.message as Json | undefined)?.usage ?? {}) as Json, usage);
          break;
        case "content_block_start": {
          const block = (event.content_block ?? {}) as Json;
          const open: OpenBlock = { type: String(block.type), json: "" };
          if (block.type === "text" && typeof block.text === "string") out.text(block.text);
          else if (block.type === "thinking") open.reasoning = out.beginReasoning();
          else if (block.type === "redacted_thinking") {
            open.reasoning = out.beginReasoning({ redacted: true, providerData: { data: block.data } });
          } else if (block.type === "tool_use") {
            open.id = typeof block.id === "string" ? block.id : undefined;
            open.name = String(block.name ?? "");
          }
          blocks.set(index, open);
          break;
        }
        case "content_block_delta": {
          const delta = (event.delta ?? {}) as Json;
          const open = blocks.get(index);
          if (delta.type === "text_delta" && typeof delta.text === "string") out.text(delta.text);
          else if (delta.type === "thinking_delta" && typeof delta.thinking === "string") out.reasoning(delta.thinking);
          else if (delta.type === "signature_delta" && open?.reasoning && typeof delta.signature === "string") {
            open.reasoning.signature = (open.reasoning.signature ?? "") + delta.signature;
          } else if (delta.type === "input_json_delta" && open && typeof delta.partial_json === "string") {
            open.json += delta.partial_json;
          }
          break;
        }
        case "content_block_stop": {
          const open = blocks.get(index);
          blocks.delete(index);
          if (open?.type !== "tool_use") break;
          if (outputTool && open.name === outputTool) {
            // The forced tool's input is the structured answer.
            out.text(JSON.stringify(parseToolArguments(open.json).arguments));
            answeredByOutputTool = true;
          } else out.toolCall(open.id, open.name ?? "", open.json);
          break;
        }
        case "message_delta": {
          usage = mapUsage((event.usage ?? {}) as Json, usage);
          const stop = mapAnthropicStop((event.delta as Json | undefined)?.stop_reason);
          if (stop) out.setFinish(stop);
          break;
        }
        case "message_stop":
          finished = true;
          break;
        case "error":
          throw mapStreamError(event, ctx());
        default:
          break;
      }
    });
    if (!finished && !out.finishReason) {
      throw new ProviderError(`${target.provider} stream ended before message_stop`, { kind: "connection", ...ctx() });
    }
    if (answeredByOutputTool && !out.hasToolCalls()) out.setFinish("stop");
    out.setUsage(usage);
    return out.build();
  });
