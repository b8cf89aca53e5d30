/**
 * OpenAI Responses adapter. Stateless (`store: false`): reasoning items are requested with
 * their encrypted content, kept in `ReasoningPart.providerData`, and sent back next turn.
 */
import { EventStream } from "../core/event-stream.js";
import { ProviderError } from "../core/errors.js";
import type { LLMRequest, ModelEvent, ModelResponse, ModelStream } from "../core/llm.js";
import { modelErrorEvent } from "../core/llm.js";
import type { ReasoningPart, Usage } from "../core/messages.js";
import { mapStreamError } from "./error-mapping.js";
import { joinUrl, parseEventData, readSse } from "./http.js";
import { JsonList, stableWireForm } from "./json-body.js";
import { toResponsesInput } from "./responses-messages.js";
import { ResponseBuilder } from "./response-builder.js";
import type { ModelTarget } from "./types.js";
import { num } from "./numbers.js";
import { applyToolExtensions } from "./tool-extensions.js";

const REASONING_MODEL = /^(o\d|gpt-5|codex)/;

export function buildResponsesBody(target: ModelTarget, request: LLMRequest): Record<string, unknown> {
  const { instructions, input } = toResponsesInput(request.messages, target);
  const reasoning = request.reasoningEffort !== undefined || request.reasoningSummary !== undefined || REASONING_MODEL.test(target.model);
  const body: Record<string, unknown> = { model: target.model, input, stream: true, store: false };
  if (instructions) body.instructions = instructions;
  if (reasoning) {
    body.include = ["reasoning.encrypted_content"];
    body.reasoning = { ...(request.reasoningEffort ? { effort: request.reasoningEffort } : {}), summary: request.reasoningSummary ?? "auto" };
  }
  if (request.truncation) body.truncation = request.truncation;
  if (request.topP !== undefined && !reasoning) body.top_p = request.topP;
  if (request.maxTokens !== undefined) body.max_output_tokens = request.maxTokens;
  if (request.temperature !== undefined && !reasoning) body.temperature = request.temperature;
  if (request.tools?.length) {
    body.tools = new JsonList(
      request.tools.map((t) =>
        stableWireForm("responses", t, () =>
          applyToolExtensions({ type: "function", name: t.name, description: t.description, parameters: t.parameters, strict: false } as Record<string, unknown>, t),
        ),
      ),
    );
    const choice = request.toolChoice;
    if (choice) body.tool_choice = typeof choice === "string" ? choice : { type: "function", name: choice.name };
  }
  if (request.output) {
    body.text = { format: { type: "json_schema", name: request.output.name ?? "final_answer", schema: request.output.schema, strict: true } };
  }
  return body;
}


export function mapResponsesUsage(raw: Record<string, unknown>): Usage {
  const input = (raw.input_tokens_details ?? {}) as Record<string, unknown>;
  const output = (raw.output_tokens_details ?? {}) as Record<string, unknown>;
  const usage: Usage = { promptTokens: num(raw.input_tokens), completionTokens: num(raw.output_tokens) };
  if (num(input.cached_tokens)) usage.cachedTokens = num(input.cached_tokens);
  if (num(output.reasoning_tokens)) usage.reasoningTokens = num(output.reasoning_tokens);
  return usage;
}

type Json = Record<string, unknown>;

export const streamResponses = (target: ModelTarget, request: LLMRequest, signal?: AbortSignal): ModelStream =>
  EventStream.run<ModelEvent, ModelResponse>(modelErrorEvent, async (stream) => {
    const out = new ResponseBuilder(stream, target);
    const reasoningItems = new Map<string, ReasoningPart>();
    const callArgs = new Map<string, string>();
    const ctx = () => ({ provider: target.provider, model: target.model, streamed: out.streamed });
    let completed = false;
    const headers = { ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}), ...target.headers };
    const req = { url: joinUrl(target.baseURL, "responses"), headers, body: buildResponsesBody(target, request) };
    await readSse(target, req, signal, out, (message) => {
      const event = parseEventData(target, message);
      if (!event) return;
      const item = (event.item ?? {}) as Json;
      const itemId = typeof event.item_id === "string" ? event.item_id : String(item.id ?? "");
      switch (event.type) {
        case "response.output_item.added":
          if (item.type === "reasoning") reasoningItems.set(itemId, out.beginReasoning({ providerData: item }));
          break;
        case "response.reasoning_summary_part.added":
          // Summaries come in parts; keep them apart as paragraphs.
          if (num(event.summary_index) > 0) out.reasoning("\n\n");
          break;
        case "response.reasoning_summary_text.delta":
        case "response.reasoning_text.delta":
          if (typeof event.delta === "string") out.reasoning(event.delta);
          break;
        case "response.output_text.delta":
          if (typeof event.delta === "string") out.text(event.delta);
          break;
        case "response.function_call_arguments.delta":
          callArgs.set(itemId, (callArgs.get(itemId) ?? "") + (typeof event.delta === "string" ? event.delta : ""));
          break;
        case "response.output_item.done":
          if (item.type === "reasoning") {
            const part = reasoningItems.get(itemId) ?? out.beginReasoning();
            // The final item carries the complete summary and encrypted content to replay.
            part.providerData = item;
          } else if (item.type === "function_call") {
            const args = typeof item.arguments === "string" ? item.arguments : (callArgs.get(itemId) ?? "");
            out.toolCall(typeof item.call_id === "string" ? item.call_id : undefined, String(item.name ?? ""), args);
          }
          break;
        case "response.completed":
        case "response.incomplete": {
          completed = true;
          const response = (event.response ?? {}) as Json;
          if (response.usage && typeof response.usage === "object") out.setUsage(mapResponsesUsage(response.usage as Json));
          const reason = (response.incomplete_details as Json | null | undefined)?.reason;
          if (event.type === "response.completed") out.setFinish(out.hasToolCalls() ? "tool_calls" : "stop");
          else out.setFinish(reason === "content_filter" ? "content_filter" : "length");
          break;
        }
        case "response.failed":
          throw mapStreamError((event.response as Json | undefined)?.error ?? event, ctx());
        case "error":
          throw mapStreamError(event, ctx());
        default:
          break;
      }
    });
    if (!completed) {
      throw new ProviderError(`${target.provider} stream ended before response.completed`, { kind: "connection", ...ctx() });
    }
    return out.build();
  });
