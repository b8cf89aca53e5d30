import type { FakeReply } from "./fake-llm-types.js";
import {
  CREATED_AT,
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
 * OpenAI Chat Completions, shaped like `openai-chat-*.sse|json` in the shared fixtures: a role
 * delta first, `id`/`type`/`name` only on the first delta of each tool call `index`, an empty
 * delta carrying `finish_reason`, a usage-only chunk (`choices: []`) when asked, then `[DONE]`.
 * Reasoning goes in `reasoning_content` (the DeepSeek/vLLM convention OpenAI-compatible servers use).
 */

const FINGERPRINT = "fp_fake0000";

function usageBody(reply: FakeReply): Record<string, unknown> {
  const u = resolveUsage(reply);
  return {
    prompt_tokens: u.promptTokens,
    completion_tokens: u.completionTokens,
    total_tokens: u.promptTokens + u.completionTokens,
    prompt_tokens_details: { cached_tokens: u.cachedTokens },
    completion_tokens_details: { reasoning_tokens: u.reasoningTokens },
  };
}

function json(reply: FakeReply, ctx: RenderContext): unknown {
  const toolCalls = (reply.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? fakeId("call_", ctx.seq, i),
    type: "function",
    function: { name: call.name, arguments: argumentsText(call) },
  }));
  const message: Record<string, unknown> = {
    role: "assistant",
    content: reply.text ?? (toolCalls.length > 0 ? null : ""),
    refusal: null,
  };
  if (reply.reasoning !== undefined) message["reasoning_content"] = reply.reasoning;
  if (toolCalls.length > 0) message["tool_calls"] = toolCalls;
  return {
    id: fakeId("chatcmpl-", ctx.seq),
    object: "chat.completion",
    created: CREATED_AT,
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(reply) }],
    usage: usageBody(reply),
    system_fingerprint: FINGERPRINT,
  };
}

function frames(reply: FakeReply, ctx: RenderContext): SseFrame[] {
  const head = {
    id: fakeId("chatcmpl-", ctx.seq),
    object: "chat.completion.chunk",
    created: CREATED_AT,
    model: ctx.model,
    system_fingerprint: FINGERPRINT,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): SseFrame =>
    dataFrame({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });

  const calls = reply.toolCalls ?? [];
  const out: SseFrame[] = [];
  // The fixtures open with `content: ""` for text answers and `content: null` for tool calls.
  out.push(
    reply.text !== undefined || calls.length === 0
      ? chunk({ role: "assistant", content: "", refusal: null })
      : chunk({ role: "assistant", content: null }),
  );
  for (const piece of splitText(reply.reasoning ?? "", reply.chunkSize)) {
    out.push(chunk({ reasoning_content: piece }));
  }
  for (const piece of splitText(reply.text ?? "", reply.chunkSize)) out.push(chunk({ content: piece }));
  calls.forEach((call, index) => {
    const id = call.id ?? fakeId("call_", ctx.seq, index);
    out.push(chunk({ tool_calls: [{ index, id, type: "function", function: { name: call.name, arguments: "" } }] }));
    for (const piece of splitArguments(argumentsText(call), reply.chunkSize)) {
      out.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  });
  out.push(chunk({}, finishReasonOf(reply)));
  if (ctx.includeUsage) out.push(dataFrame({ ...head, choices: [], usage: usageBody(reply) }));
  out.push({ data: "[DONE]", terminal: true });
  return out;
}

export const chatRenderer: WireRenderer = { json, frames };
