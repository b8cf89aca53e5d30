/**
 * Core messages → OpenAI Chat Completions messages (also used by every OpenAI-compatible
 * server). System prompts are hoisted to one leading system message; tool results that carry
 * images are followed by a user message with those images, since `tool` messages are text-only.
 */
import type { AssistantMessage, Message, ToolMessage, ToolResultContentPart, UserContentPart, UserMessage } from "../core/messages.js";
import { argumentsText, canReplayReasoning, hoistSystem, imageUrl, isImagePart, partAsText, partsAsText } from "./content.js";
import type { ModelTarget } from "./types.js";

export type ChatContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } }
  | { type: "file"; file: { filename?: string; file_data: string } };

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ChatContentPart[] }
  | { role: "assistant"; content: string | null; tool_calls?: ChatToolCall[]; reasoning_content?: string }
  | { role: "tool"; tool_call_id: string; content: string };

function userContent(parts: readonly (UserContentPart | ToolResultContentPart)[]): string | ChatContentPart[] {
  if (parts.every((p) => p.type === "text")) return parts.map((p) => (p.type === "text" ? p.text : "")).join("");
  const out: ChatContentPart[] = [];
  for (const part of parts) {
    if (isImagePart(part)) {
      const url = imageUrl(part);
      if (url) {
        out.push({ type: "image_url", image_url: { url } });
        continue;
      }
    }
    if (part.type === "file" && part.mimeType === "application/pdf" && part.data) {
      out.push({ type: "file", file: { filename: part.name, file_data: `data:${part.mimeType};base64,${part.data}` } });
      continue;
    }
    const text = partAsText(part);
    if (text) out.push({ type: "text", text });
  }
  return out;
}

const chatAssistantWithReasoning = (m: AssistantMessage): ChatMessage => chatAssistantMessage(m, true);
const chatAssistantPlain = (m: AssistantMessage): ChatMessage => chatAssistantMessage(m, false);

/**
 * Every request's whole history passes here: plain loops, and the rare case (a tool result with
 * images) in helpers of its own, keep what V8 compiles for it small.
 */
export function toChatMessages(messages: readonly Message[], target: ModelTarget): ChatMessage[] {
  const { system, rest } = hoistSystem(messages);
  const out: ChatMessage[] = system ? [{ role: "system", content: system }] : [];
  let pendingImages: ChatContentPart[] = [];
  for (let i = 0; i < rest.length; i++) {
    const m = rest[i]!;
    if (m.role !== "tool" && pendingImages.length > 0) {
      out.push(imagesMessage(pendingImages));
      pendingImages = [];
    }
    switch (m.role) {
      case "user":
        // A message's wire form depends on it alone: built once per message object, so its
        // bytes are cached too (see JsonItems) and a replayed history is not re-serialised.
        out.push(wireForm(m, plainForms, chatUserMessage));
        break;
      case "assistant":
        if (canReplayReasoning(m, target)) out.push(wireForm(m, reasoningForms, chatAssistantWithReasoning));
        else out.push(wireForm(m, plainForms, chatAssistantPlain));
        break;
      case "tool":
        if (!hasImagePart(m.content)) out.push(wireForm(m, plainForms, chatToolMessage));
        else out.push(toolMessageWithImages(m, pendingImages));
        break;
    }
  }
  if (pendingImages.length > 0) out.push(imagesMessage(pendingImages));
  return out;
}

function hasImagePart(parts: ToolMessage["content"]): boolean {
  for (let i = 0; i < parts.length; i++) if (isImagePart(parts[i]!)) return true;
  return false;
}

/** Chat tool messages carry text only: the images follow in a user message (collected into `pendingImages`). */
function toolMessageWithImages(m: ToolMessage, pendingImages: ChatContentPart[]): ChatMessage {
  const text = partsAsText(m.content.filter((p) => !isImagePart(p)));
  for (const img of m.content.filter(isImagePart)) {
    const url = imageUrl(img);
    if (url) pendingImages.push({ type: "image_url", image_url: { url } });
  }
  return { role: "tool", tool_call_id: m.toolCallId, content: text || "(see images below)" };
}

function imagesMessage(images: readonly ChatContentPart[]): ChatMessage {
  return { role: "user", content: [{ type: "text", text: "Images returned by the tool calls above:" }, ...images] };
}

/** Messages with at least this much text keep one wire form (and its cached bytes) per object. */
export const STABLE_WIRE_CHARS = 1024;
/** Wire forms by message object: without, and with replayed reasoning. Never mutate one. */
const plainForms = new WeakMap<Message, ChatMessage>();
const reasoningForms = new WeakMap<Message, ChatMessage>();
const stableForms = new WeakSet<ChatMessage>();

/** Whether `form` is a kept wire form (see JsonItems: its bytes are cached, not re-serialised). */
export function isStableWireForm(form: ChatMessage): boolean {
  return stableForms.has(form);
}

function textChars(m: Message): number {
  let chars = 0;
  for (const p of m.content) {
    if (p.type === "text" || p.type === "reasoning") chars += p.text.length;
    else if (p.type === "toolCall") chars += p.rawArguments.length;
  }
  return chars;
}

/** A short message's wire form is built per call; a long one's once per message object. */
function wireForm<M extends Message>(m: M, forms: WeakMap<Message, ChatMessage>, build: (m: M) => ChatMessage): ChatMessage {
  let form = forms.get(m);
  if (form) return form;
  form = build(m);
  if (textChars(m) >= STABLE_WIRE_CHARS) {
    forms.set(m, form);
    stableForms.add(form);
  }
  return form;
}

function chatUserMessage(m: UserMessage): ChatMessage {
  return { role: "user", content: userContent(m.content) };
}

function chatToolMessage(m: ToolMessage): ChatMessage {
  return { role: "tool", tool_call_id: m.toolCallId, content: partsAsText(m.content) };
}

function chatAssistantMessage(m: AssistantMessage, replayReasoning: boolean): ChatMessage {
  const text = m.content.map((p) => (p.type === "text" ? p.text : "")).join("");
  const toolCalls: ChatToolCall[] = [];
  let reasoning = "";
  for (const p of m.content) {
    if (p.type === "toolCall") {
      toolCalls.push({ id: p.id, type: "function", function: { name: p.name, arguments: argumentsText(p.rawArguments, p.arguments) } });
    } else if (p.type === "reasoning" && !p.redacted) reasoning += p.text;
  }
  const msg: ChatMessage = { role: "assistant", content: text || (toolCalls.length ? null : "") };
  if (toolCalls.length) msg.tool_calls = toolCalls;
  // DeepSeek/Kimi thinking models expect their reasoning back during a tool loop.
  if (reasoning && replayReasoning) msg.reasoning_content = reasoning;
  return msg;
}
