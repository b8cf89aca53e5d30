import type { FakeReply } from "./fake-llm-types.js";
import {
  DEFAULT_SIGNATURE,
  argumentsText,
  dataFrame,
  fakeId,
  finishReasonOf,
  resolveUsage,
  splitArguments,
  splitText,
  type FinishReason,
  type RenderContext,
  type SseFrame,
  type WireRenderer,
} from "./render-common.js";

/**
 * Anthropic Messages, shaped like `anthropic-messages-*` in the shared fixtures: `event:` lines,
 * a thinking block ending in `signature_delta`, tool input as `input_json_delta` fragments that
 * start with `""`, a `ping` after the first block opens, cumulative usage on `message_delta`.
 * Anthropic's `input_tokens` excludes cache reads, so prompt tokens are split accordingly.
 */

const STOP_REASONS: Record<FinishReason, string> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  content_filter: "refusal",
};

interface Block {
  start: Record<string, unknown>;
  deltas: Record<string, unknown>[];
  final: Record<string, unknown>;
}

function blocks(reply: FakeReply, ctx: RenderContext): Block[] {
  const out: Block[] = [];
  if (reply.reasoning !== undefined) {
    const signature = reply.reasoningSignature ?? DEFAULT_SIGNATURE;
    out.push({
      start: { type: "thinking", thinking: "", signature: "" },
      deltas: [
        ...splitText(reply.reasoning, reply.chunkSize).map((thinking) => ({ type: "thinking_delta", thinking })),
        { type: "signature_delta", signature },
      ],
      final: { type: "thinking", thinking: reply.reasoning, signature },
    });
  }
  if (reply.text !== undefined) {
    out.push({
      start: { type: "text", text: "" },
      deltas: splitText(reply.text, reply.chunkSize).map((text) => ({ type: "text_delta", text })),
      final: { type: "text", text: reply.text },
    });
  }
  (reply.toolCalls ?? []).forEach((call, i) => {
    const id = call.id ?? fakeId("toolu_", ctx.seq, i);
    const args = argumentsText(call);
    const fragments = ["", ...splitArguments(args, reply.chunkSize)];
    // A deliberately broken argument string cannot become `input`; keep it visible as a string.
    let input: unknown = {};
    try {
      input = args === "" ? {} : JSON.parse(args);
    } catch {
      input = args;
    }
    out.push({
      start: { type: "tool_use", id, name: call.name, input: {} },
      deltas: fragments.map((partial_json) => ({ type: "input_json_delta", partial_json })),
      final: { type: "tool_use", id, name: call.name, input },
    });
  });
  return out;
}

function usageBody(reply: FakeReply, outputTokens: number): Record<string, unknown> {
  const u = resolveUsage(reply);
  return {
    input_tokens: u.promptTokens - u.cachedTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: u.cachedTokens,
    output_tokens: outputTokens,
    service_tier: "standard",
  };
}

function json(reply: FakeReply, ctx: RenderContext): unknown {
  return {
    id: fakeId("msg_", ctx.seq),
    type: "message",
    role: "assistant",
    model: ctx.model,
    content: blocks(reply, ctx).map((b) => b.final),
    stop_reason: STOP_REASONS[finishReasonOf(reply)],
    stop_sequence: null,
    usage: usageBody(reply, resolveUsage(reply).completionTokens),
  };
}

function frames(reply: FakeReply, ctx: RenderContext): SseFrame[] {
  const out: SseFrame[] = [];
  const frame = (payload: Record<string, unknown>): void => {
    out.push(dataFrame(payload, String(payload["type"])));
  };
  frame({
    type: "message_start",
    message: {
      id: fakeId("msg_", ctx.seq),
      type: "message",
      role: "assistant",
      model: ctx.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: usageBody(reply, 1),
    },
  });
  blocks(reply, ctx).forEach((block, index) => {
    frame({ type: "content_block_start", index, content_block: block.start });
    if (index === 0) frame({ type: "ping" });
    for (const delta of block.deltas) frame({ type: "content_block_delta", index, delta });
    frame({ type: "content_block_stop", index });
  });
  const { completionTokens } = resolveUsage(reply);
  frame({
    type: "message_delta",
    delta: { stop_reason: STOP_REASONS[finishReasonOf(reply)], stop_sequence: null },
    usage: usageBody(reply, completionTokens),
  });
  out.push({ ...dataFrame({ type: "message_stop" }, "message_stop"), terminal: true });
  return out;
}

export const anthropicRenderer: WireRenderer = { json, frames };
