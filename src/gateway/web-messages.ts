/**
 * The web UI's view of a conversation: stored messages and live engine events flattened to
 * small JSON objects the browser renders without knowing nanobot's message vocabulary.
 */
import type { AgentEvent } from "../core/events.js";
import { reasoningOf, textOf, toolCallsOf } from "../core/message-helpers.js";
import type { ContentPart, Message } from "../core/messages.js";
import type { ElicitField } from "../mcp/elicitation-schema.js";

export interface WebToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** An MCP-UI resource (`ui://…`) a tool returned: the page renders it in a sandboxed frame. */
export interface WebUiResource {
  uri: string;
  mimeType: string;
  content: string;
}

export type WebMessage =
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; reasoning?: string; toolCalls?: WebToolCall[] }
  | { role: "tool"; toolCallId: string; name: string; text: string; isError: boolean; ui?: WebUiResource[] };

function uiResources(parts: readonly ContentPart[]): { ui?: WebUiResource[] } {
  const ui = parts.flatMap((p) => (p.type === "ui" ? [{ uri: p.uri, mimeType: p.mimeType, content: p.content }] : []));
  return ui.length > 0 ? { ui } : {};
}

export function toWebMessages(messages: readonly Message[]): WebMessage[] {
  const out: WebMessage[] = [];
  for (const m of messages) {
    if (m.role === "user") out.push({ role: "user", text: textOf(m) });
    else if (m.role === "assistant") {
      const calls = toolCallsOf(m).map((t) => ({ id: t.id, name: t.name, arguments: t.arguments }));
      const reasoning = reasoningOf(m);
      out.push({ role: "assistant", text: textOf(m), ...(reasoning ? { reasoning } : {}), ...(calls.length > 0 ? { toolCalls: calls } : {}) });
    } else if (m.role === "tool") {
      out.push({ role: "tool", toolCallId: m.toolCallId, name: m.toolName, text: textOf(m.content), isError: m.isError, ...uiResources(m.content) });
    }
  }
  return out;
}

/** Events the UI's stream carries; `done` and `error` end it. */
export type WebEvent =
  | { type: "text"; delta: string }
  | { type: "reasoning"; delta: string }
  | { type: "tool_call"; call: WebToolCall }
  | { type: "tool_result"; toolCallId: string; name: string; text: string; isError: boolean; ui?: WebUiResource[] }
  /** Something the user should know about the turn, e.g. that their message was cut to fit the model. */
  | { type: "warning"; message: string }
  | { type: "done"; content: string; stopReason: string; toolsUsed: string[]; error?: string; replayed?: boolean }
  | { type: "error"; message: string }
  | WebElicitation
  | { type: "elicitation_end"; id: string; action: "accept" | "decline" | "cancel" };

/**
 * An MCP server asks the user something (form mode: `fields` to fill, the raw `requestedSchema`
 * alongside; url mode: a `url` to visit). Answered with `POST /api/elicitation/:id`.
 */
export interface WebElicitation {
  type: "elicitation";
  id: string;
  server: string;
  message: string;
  mode: "form" | "url";
  fields?: ElicitField[];
  requestedSchema?: Record<string, unknown>;
  url?: string;
}

/** The engine events the UI shows; the rest (usage, checkpoints, …) stay server-side. */
export function toWebEvent(event: AgentEvent): WebEvent | undefined {
  switch (event.type) {
    case "text_delta":
      return { type: "text", delta: event.delta };
    case "reasoning_delta":
      return { type: "reasoning", delta: event.delta };
    case "tool_call":
      return { type: "tool_call", call: { id: event.toolCall.id, name: event.toolCall.name, arguments: event.toolCall.arguments } };
    case "tool_result":
      return {
        type: "tool_result",
        toolCallId: event.result.toolCallId,
        name: event.result.toolName,
        text: textOf(event.result.content),
        isError: event.result.isError,
        ...uiResources(event.result.content),
      };
    case "warning":
      return { type: "warning", message: event.message };
    default:
      return undefined;
  }
}
