import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { FakeLLM } from "./fake-llm-types.js";

/**
 * Official SDK clients pointed at a fake, with retries off so one step answers one call, and
 * a chat-stream reassembler that follows the documented rules (tool calls accumulate per `index`).
 */

/** `quiet` silences the SDK's own error logging, for tests that feed it broken data on purpose. */
export interface ClientOptions {
  quiet?: boolean;
}

export function openaiFor(fake: FakeLLM, options: ClientOptions = {}): OpenAI {
  return new OpenAI({ apiKey: "sk-test", baseURL: fake.openaiBaseURL, maxRetries: 0, ...(options.quiet ? { logLevel: "off" } : {}) });
}

export function anthropicFor(fake: FakeLLM, options: ClientOptions = {}): Anthropic {
  return new Anthropic({ apiKey: "sk-ant-test", baseURL: fake.anthropicBaseURL, maxRetries: 0, ...(options.quiet ? { logLevel: "off" } : {}) });
}

export interface AssembledToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface AssembledChat {
  role: string | undefined;
  text: string;
  reasoning: string;
  toolCalls: AssembledToolCall[];
  finishReason: string | null;
  usage: ChatCompletionChunk["usage"] | undefined;
  chunks: ChatCompletionChunk[];
}

/** Reassembles a Chat Completions stream as a careful client would. */
export async function assembleChat(stream: AsyncIterable<ChatCompletionChunk>): Promise<AssembledChat> {
  const out: AssembledChat = { role: undefined, text: "", reasoning: "", toolCalls: [], finishReason: null, usage: undefined, chunks: [] };
  for await (const chunk of stream) {
    out.chunks.push(chunk);
    if (chunk.usage) out.usage = chunk.usage;
    for (const choice of chunk.choices) {
      const delta = choice.delta as ChatCompletionChunk.Choice.Delta & { reasoning_content?: string };
      if (delta.role !== undefined) out.role = delta.role;
      out.text += delta.content ?? "";
      out.reasoning += delta.reasoning_content ?? "";
      for (const call of delta.tool_calls ?? []) {
        const slot = (out.toolCalls[call.index] ??= { id: "", name: "", arguments: "" });
        slot.id += call.id ?? "";
        slot.name += call.function?.name ?? "";
        slot.arguments += call.function?.arguments ?? "";
      }
      if (choice.finish_reason !== null) out.finishReason = choice.finish_reason;
    }
  }
  return out;
}

/** Collects every item of an async iterable (for SDK event streams). */
export async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

/** Awaits a promise expected to reject and returns the rejection for inspection. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to fail, but it succeeded");
}

export const CHAT_REQUEST = {
  model: "gpt-4o-2024-08-06",
  messages: [{ role: "user" as const, content: "What's the weather in Paris?" }],
};

export const ANTHROPIC_REQUEST = {
  model: "claude-sonnet-4-5",
  max_tokens: 1024,
  messages: [{ role: "user" as const, content: "What's the weather in Paris?" }],
};
