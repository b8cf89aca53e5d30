/**
 * Core messages → Anthropic Messages. Anthropic wants strictly alternating user/assistant
 * turns starting with a user turn, tool results inside user messages, thinking blocks replayed
 * with their signatures, and at most four prompt-cache breakpoints (system, tools, the tail).
 */
import type { FilePart, ImagePart, Message, ToolResultContentPart, UserContentPart } from "../core/messages.js";
import { canReplayReasoning, hoistSystem, imageUrl, isImagePart, partAsText } from "./content.js";
import type { ModelTarget } from "./types.js";

export type CacheControl = { type: "ephemeral" };

export type AnthropicImageSource =
  | { type: "base64"; media_type: string; data: string }
  | { type: "url"; url: string };

export type AnthropicBlock =
  | { type: "text"; text: string; cache_control?: CacheControl }
  | { type: "image"; source: AnthropicImageSource; cache_control?: CacheControl }
  | { type: "document"; source: { type: "base64"; media_type: string; data: string }; cache_control?: CacheControl }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown>; cache_control?: CacheControl }
  | {
      type: "tool_result";
      tool_use_id: string;
      content?: AnthropicBlock[];
      is_error?: boolean;
      cache_control?: CacheControl;
    };

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicBlock[];
}

const EPHEMERAL: CacheControl = { type: "ephemeral" };
/** Breakpoints left for the conversation tail after system and tools (Anthropic allows 4). */
const TAIL_BREAKPOINTS = 2;

function imageSource(part: ImagePart | FilePart): AnthropicImageSource | undefined {
  const url = imageUrl(part);
  if (!url) return undefined;
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (match?.[1] && match[2] !== undefined) return { type: "base64", media_type: match[1], data: match[2] };
  return { type: "url", url };
}

function contentBlocks(parts: readonly (UserContentPart | ToolResultContentPart)[]): AnthropicBlock[] {
  const out: AnthropicBlock[] = [];
  for (const part of parts) {
    if (isImagePart(part)) {
      const source = imageSource(part);
      if (source) {
        out.push({ type: "image", source });
        continue;
      }
    }
    if (part.type === "file" && part.mimeType === "application/pdf" && part.data) {
      out.push({ type: "document", source: { type: "base64", media_type: part.mimeType, data: part.data } });
      continue;
    }
    const text = partAsText(part);
    if (text) out.push({ type: "text", text });
  }
  return out;
}

function assistantBlocks(m: Extract<Message, { role: "assistant" }>, target: ModelTarget): AnthropicBlock[] {
  const replay = canReplayReasoning(m, target);
  const out: AnthropicBlock[] = [];
  for (const p of m.content) {
    if (p.type === "text" && p.text) out.push({ type: "text", text: p.text });
    else if (p.type === "toolCall") out.push({ type: "tool_use", id: p.id, name: p.name, input: p.arguments });
    else if (p.type === "reasoning" && replay) {
      const data = p.providerData?.data;
      if (p.redacted && typeof data === "string") out.push({ type: "redacted_thinking", data });
      // Thinking without a signature is rejected by the API; it is dropped instead.
      else if (p.signature) out.push({ type: "thinking", thinking: p.text, signature: p.signature });
    }
  }
  return out;
}

/** Marks the last cacheable block of the last `count` messages. */
function markTail(messages: AnthropicMessage[], count: number): void {
  let marked = 0;
  for (let i = messages.length - 1; i >= 0 && marked < count; i--) {
    const blocks = messages[i]?.content ?? [];
    for (let j = blocks.length - 1; j >= 0; j--) {
      const block = blocks[j];
      if (!block || block.type === "thinking" || block.type === "redacted_thinking") continue;
      block.cache_control = EPHEMERAL;
      marked++;
      break;
    }
  }
}

export function toAnthropicMessages(
  messages: readonly Message[],
  target: ModelTarget,
): { system?: Array<{ type: "text"; text: string; cache_control?: CacheControl }>; messages: AnthropicMessage[] } {
  const { system, rest } = hoistSystem(messages);
  const out: AnthropicMessage[] = [];
  const append = (role: "user" | "assistant", blocks: AnthropicBlock[]) => {
    if (blocks.length === 0) return;
    const last = out.at(-1);
    // Consecutive same-role turns are merged so roles alternate.
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of rest) {
    if (m.role === "user") append("user", contentBlocks(m.content));
    else if (m.role === "assistant") append("assistant", assistantBlocks(m, target));
    else if (m.role === "tool") {
      const content = contentBlocks(m.content);
      append("user", [
        { type: "tool_result", tool_use_id: m.toolCallId, ...(content.length ? { content } : {}), ...(m.isError ? { is_error: true } : {}) },
      ]);
    }
  }
  if (out[0]?.role === "assistant") out.unshift({ role: "user", content: [{ type: "text", text: "(conversation continued)" }] });
  markTail(out, TAIL_BREAKPOINTS);
  return {
    ...(system ? { system: [{ type: "text" as const, text: system, cache_control: EPHEMERAL }] } : {}),
    messages: out,
  };
}
