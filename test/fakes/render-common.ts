import type { FakeReply, FakeToolCall, FakeUsage } from "./fake-llm-types.js";

/**
 * Helpers shared by the three wire renderers: deterministic ids, text splitting and the
 * normalised usage numbers each API then spells in its own convention.
 */

/** One SSE event to write. `terminal` marks the end-of-stream marker that `no_done` drops. */
export interface SseFrame {
  event?: string;
  data: string;
  terminal?: boolean;
}

/** What a renderer needs to know about the request it answers. */
export interface RenderContext {
  model: string;
  /** A per-server counter so ids are unique and stable within one test. */
  seq: number;
  /** Chat Completions only: `stream_options.include_usage`. */
  includeUsage: boolean;
}

/** Renders one reply step for one API, as a JSON body and as SSE frames. */
export interface WireRenderer {
  json(reply: FakeReply, ctx: RenderContext): unknown;
  frames(reply: FakeReply, ctx: RenderContext): SseFrame[];
}

/** A fixed creation time keeps rendered bodies reproducible across runs. */
export const CREATED_AT = 1_727_346_178;

export const DEFAULT_SIGNATURE = "ZmFrZS1yZWFzb25pbmctc2lnbmF0dXJl";

/** An id that looks like the provider's (`call_…`, `toolu_…`) and is unique per server. */
export function fakeId(prefix: string, seq: number, n = 0): string {
  const tail = `${seq.toString(36)}x${n.toString(36)}`.padStart(8, "0");
  return `${prefix}fake${tail}`;
}

/**
 * Splits text into stream deltas: `size` characters each when given, otherwise whole words
 * with their leading whitespace (`"I'm unable to"` → `["I'm", " unable", " to"]`), the way
 * real providers tokenise.
 */
export function splitText(text: string, size?: number): string[] {
  if (text === "") return [];
  if (size !== undefined && size > 0) {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out;
  }
  return text.split(/(?<=\S)(?=\s)/);
}

/** Tool-call argument fragments; real APIs send a few characters at a time. */
export function splitArguments(args: string, size?: number): string[] {
  return splitText(args, size ?? 8);
}

export function argumentsText(call: FakeToolCall): string {
  return typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
}

/** Usage with every number filled in; prompt tokens include cached ones (OpenAI convention). */
export interface ResolvedUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
}

/** Defaults: 12 prompt tokens, about one completion token per 4 output characters. */
export function resolveUsage(reply: FakeReply): ResolvedUsage {
  const usage: FakeUsage = reply.usage ?? {};
  const toolChars = (reply.toolCalls ?? []).reduce((n, c) => n + c.name.length + argumentsText(c).length, 0);
  const reasoningTokens = Math.ceil((reply.reasoning ?? "").length / 4);
  const outputChars = (reply.text ?? "").length + toolChars;
  return {
    promptTokens: usage.promptTokens ?? 12,
    completionTokens: usage.completionTokens ?? Math.max(1, Math.ceil(outputChars / 4) + reasoningTokens),
    cachedTokens: usage.cachedTokens ?? 0,
    reasoningTokens,
  };
}

export type FinishReason = NonNullable<FakeReply["finishReason"]>;

export function finishReasonOf(reply: FakeReply): FinishReason {
  return reply.finishReason ?? ((reply.toolCalls?.length ?? 0) > 0 ? "tool_calls" : "stop");
}

export function dataFrame(payload: unknown, event?: string): SseFrame {
  return event === undefined ? { data: JSON.stringify(payload) } : { event, data: JSON.stringify(payload) };
}
