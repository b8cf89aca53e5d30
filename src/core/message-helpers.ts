import { messageId } from "./ids.js";
import type {
  AssistantMessage,
  ContentPart,
  Message,
  SystemMessage,
  ToolCallPart,
  ToolMessage,
  ToolResultContentPart,
  UserContentPart,
  UserMessage,
} from "./messages.js";

/** Builders and readers for messages, so callers never hand-assemble part arrays. */

export function systemMessage(text: string): SystemMessage {
  return { id: messageId(), role: "system", content: [{ type: "text", text }], createdAt: Date.now() };
}

export function userMessage(content: string | UserContentPart[]): UserMessage {
  const parts = typeof content === "string" ? [{ type: "text" as const, text: content }] : content;
  return { id: messageId(), role: "user", content: parts, createdAt: Date.now() };
}

export function assistantMessage(text: string, toolCalls: ToolCallPart[] = []): AssistantMessage {
  const content: AssistantMessage["content"] = text ? [{ type: "text", text }] : [];
  return { id: messageId(), role: "assistant", content: [...content, ...toolCalls], createdAt: Date.now() };
}

export function toolMessage(
  toolCallId: string,
  toolName: string,
  content: string | ToolResultContentPart[],
  isError = false,
): ToolMessage {
  const parts = typeof content === "string" ? [{ type: "text" as const, text: content }] : content;
  return { id: messageId(), role: "tool", toolCallId, toolName, content: parts, isError, createdAt: Date.now() };
}

/** The concatenated text parts of a message or part list (reasoning excluded). */
export function textOf(input: Message | readonly ContentPart[]): string {
  const parts: readonly ContentPart[] = Array.isArray(input) ? input : (input as Message).content;
  let out = "";
  for (const part of parts) if (part.type === "text") out += part.text;
  return out;
}

/** The tool calls of an assistant message (empty for other roles). */
export function toolCallsOf(message: Message): ToolCallPart[] {
  const calls: ToolCallPart[] = [];
  if (message.role !== "assistant") return calls;
  const parts = message.content;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part.type === "toolCall") calls.push(part);
  }
  return calls;
}

/** Whether an assistant message calls a tool. */
export function hasToolCalls(message: Message): boolean {
  if (message.role !== "assistant") return false;
  const parts = message.content;
  for (let i = 0; i < parts.length; i++) if (parts[i]!.type === "toolCall") return true;
  return false;
}

/** The reasoning text of an assistant message. */
export function reasoningOf(message: AssistantMessage): string {
  let out = "";
  for (const part of message.content) if (part.type === "reasoning") out += part.text;
  return out;
}
