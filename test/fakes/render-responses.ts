import type { FakeReply } from "./fake-llm-types.js";
import {
  CREATED_AT,
  DEFAULT_SIGNATURE,
  argumentsText,
  dataFrame,
  fakeId,
  finishReasonOf,
  resolveUsage,
  splitArguments,
  splitText,
  type RenderContext,
  type SseFrame,
  type WireRenderer,
} from "./render-common.js";

/**
 * OpenAI Responses API. Output is a list of items (reasoning, message, function_call); the stream
 * is the real event sequence: `response.created`, `response.in_progress`, per item
 * `output_item.added` → part/summary events → deltas → `…done` → `output_item.done`, then
 * `response.completed` (or `response.incomplete` for a length/content-filter stop), every event
 * numbered by `sequence_number`. The openai SDK's `ResponseStream` accumulator rejects any
 * event that refers to an item or part not announced first, so the order here matters.
 */

type Json = Record<string, unknown>;

/** One output item: its final form and the events that build it after `output_item.added`. */
interface Item {
  added: Json;
  final: Json;
  events(outputIndex: number): Json[];
}

function items(reply: FakeReply, ctx: RenderContext): Item[] {
  const out: Item[] = [];
  if (reply.reasoning !== undefined) {
    const id = fakeId("rs_", ctx.seq);
    const text = reply.reasoning;
    const encrypted = reply.reasoningSignature ?? DEFAULT_SIGNATURE;
    const part = { type: "summary_text", text };
    out.push({
      added: { id, type: "reasoning", summary: [], encrypted_content: encrypted },
      final: { id, type: "reasoning", summary: [part], encrypted_content: encrypted },
      events: (output_index) => [
        { type: "response.reasoning_summary_part.added", item_id: id, output_index, summary_index: 0, part: { ...part, text: "" } },
        ...splitText(text, reply.chunkSize).map((delta) => ({
          type: "response.reasoning_summary_text.delta",
          item_id: id,
          output_index,
          summary_index: 0,
          delta,
        })),
        { type: "response.reasoning_summary_text.done", item_id: id, output_index, summary_index: 0, text },
        { type: "response.reasoning_summary_part.done", item_id: id, output_index, summary_index: 0, part },
      ],
    });
  }
  if (reply.text !== undefined) {
    const id = fakeId("msg_", ctx.seq);
    const text = reply.text;
    const part = { type: "output_text", annotations: [], logprobs: [], text };
    const where = (output_index: number): Json => ({ item_id: id, output_index, content_index: 0 });
    out.push({
      added: { id, type: "message", status: "in_progress", content: [], role: "assistant" },
      final: { id, type: "message", status: "completed", content: [part], role: "assistant" },
      events: (i) => [
        { type: "response.content_part.added", ...where(i), part: { ...part, text: "" } },
        ...splitText(text, reply.chunkSize).map((delta) => ({
          type: "response.output_text.delta",
          ...where(i),
          delta,
          logprobs: [],
        })),
        { type: "response.output_text.done", ...where(i), text, logprobs: [] },
        { type: "response.content_part.done", ...where(i), part },
      ],
    });
  }
  (reply.toolCalls ?? []).forEach((call, n) => {
    const id = fakeId("fc_", ctx.seq, n);
    const callId = call.id ?? fakeId("call_", ctx.seq, n);
    const args = argumentsText(call);
    const base = { id, type: "function_call", call_id: callId, name: call.name };
    out.push({
      added: { ...base, status: "in_progress", arguments: "" },
      final: { ...base, status: "completed", arguments: args },
      events: (output_index) => [
        ...splitArguments(args, reply.chunkSize).map((delta) => ({
          type: "response.function_call_arguments.delta",
          item_id: id,
          output_index,
          delta,
        })),
        { type: "response.function_call_arguments.done", item_id: id, output_index, arguments: args },
      ],
    });
  });
  return out;
}

function usageBody(reply: FakeReply): Json {
  const u = resolveUsage(reply);
  return {
    input_tokens: u.promptTokens,
    input_tokens_details: { cached_tokens: u.cachedTokens },
    output_tokens: u.completionTokens,
    output_tokens_details: { reasoning_tokens: u.reasoningTokens },
    total_tokens: u.promptTokens + u.completionTokens,
  };
}

/** The Response object; `output`/`usage` are empty while in progress, as the API sends them. */
function responseBody(reply: FakeReply, ctx: RenderContext, done: boolean, output: Json[]): Json {
  const finish = finishReasonOf(reply);
  const incomplete = finish === "length" || finish === "content_filter";
  let status = "in_progress";
  if (done) status = incomplete ? "incomplete" : "completed";
  return {
    id: fakeId("resp_", ctx.seq),
    object: "response",
    created_at: CREATED_AT,
    status,
    background: false,
    error: null,
    incomplete_details:
      done && incomplete ? { reason: finish === "length" ? "max_output_tokens" : "content_filter" } : null,
    instructions: null,
    max_output_tokens: null,
    model: ctx.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: "text" } },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    usage: done ? usageBody(reply) : null,
    user: null,
    metadata: {},
  };
}

function json(reply: FakeReply, ctx: RenderContext): unknown {
  return responseBody(
    reply,
    ctx,
    true,
    items(reply, ctx).map((item) => item.final),
  );
}

function frames(reply: FakeReply, ctx: RenderContext): SseFrame[] {
  const events: Json[] = [];
  const start = responseBody(reply, ctx, false, []);
  events.push({ type: "response.created", response: start }, { type: "response.in_progress", response: start });
  const all = items(reply, ctx);
  all.forEach((item, output_index) => {
    events.push({ type: "response.output_item.added", output_index, item: item.added });
    events.push(...item.events(output_index));
    events.push({ type: "response.output_item.done", output_index, item: item.final });
  });
  const end = responseBody(
    reply,
    ctx,
    true,
    all.map((item) => item.final),
  );
  events.push({ type: end["status"] === "completed" ? "response.completed" : "response.incomplete", response: end });
  return events.map((event, sequence_number) => {
    const frame = dataFrame({ ...event, sequence_number }, String(event["type"]));
    return sequence_number === events.length - 1 ? { ...frame, terminal: true } : frame;
  });
}

export const responsesRenderer: WireRenderer = { json, frames };
