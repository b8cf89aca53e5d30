/**
 * What a running `chat-with-*` call reports: each engine event becomes a
 * `notifications/progress` message for the caller (when it sent a progress token), and the
 * session's latest state is kept for the `chat://progress` resource, so a client that did not
 * ask for notifications can still look at what the agent is doing.
 */
import type { AgentEvent } from "../../core/events.js";

export interface ToolActivity {
  id: string;
  name: string;
  status: "running" | "done" | "error";
}

/** One session's current (or last) turn, as `chat://progress` shows it. */
export interface ChatProgress {
  sessionKey: string;
  agent: string;
  running: boolean;
  /** The reply text streamed so far. */
  text: string;
  tools: ToolActivity[];
  stopReason?: string;
  error?: string;
  updatedAt: string;
}

/** Latest progress per session key, shared by every connection of one server. */
export class ProgressBoard {
  private readonly bySession = new Map<string, ChatProgress>();

  start(sessionKey: string, agent: string): ChatProgress {
    const entry: ChatProgress = { sessionKey, agent, running: true, text: "", tools: [], updatedAt: new Date().toISOString() };
    this.bySession.set(sessionKey, entry);
    return entry;
  }

  get(sessionKey: string): ChatProgress | undefined {
    return this.bySession.get(sessionKey);
  }

  forget(sessionKey: string): void {
    this.bySession.delete(sessionKey);
  }
}

/** A progress notification's message for an event, or undefined when the event is not shown. */
export function progressMessage(event: AgentEvent): string | undefined {
  switch (event.type) {
    case "text_delta":
      return event.delta;
    case "tool_call":
      return `[tool] ${event.toolCall.name}`;
    case "tool_result":
      return `[tool ${event.result.isError ? "failed" : "done"}] ${event.result.toolName}`;
    case "retry_wait":
      return `[retry] ${event.error}`;
    case "compaction":
      return "[compacting context]";
    default:
      return undefined;
  }
}

/** Folds an event into the session's progress entry. */
export function applyEvent(entry: ChatProgress, event: AgentEvent): void {
  entry.updatedAt = new Date().toISOString();
  if (event.type === "text_delta") entry.text += event.delta;
  else if (event.type === "tool_call") entry.tools.push({ id: event.toolCall.id, name: event.toolCall.name, status: "running" });
  else if (event.type === "tool_result") {
    const tool = entry.tools.find((t) => t.id === event.result.toolCallId);
    if (tool) tool.status = event.result.isError ? "error" : "done";
  }
}

/** Plain-text rendering for clients that show resources as text. */
export function progressText(entry: ChatProgress | undefined): string {
  if (!entry) return "No turn has run in this session yet.";
  const tools = entry.tools.map((t) => `- ${t.name}: ${t.status}`).join("\n");
  const state = entry.running ? "running" : `finished (${entry.stopReason ?? "unknown"})`;
  return [`${entry.agent}: ${state}`, tools, entry.text].filter(Boolean).join("\n\n");
}
