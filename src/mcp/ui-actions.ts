/**
 * MCP-UI actions (Go nanobot §5.4): a user message whose text is an action JSON either runs a
 * tool directly (no LLM call) or is replaced by an expanded prompt before the model sees it.
 */
import type { ToolOutput } from "../tools/tool.js";
import type { McpClientManager } from "./manager.js";
import { parseToolRef } from "./names.js";
import { promptText } from "./result-mapping.js";
import type { McpToolEntry } from "./tool-adapters.js";

export type UiAction =
  | { type: "tool"; toolName: string; params: Record<string, unknown> }
  | { type: "prompt"; prompt: string }
  | { type: "prompt"; promptName: string; params: Record<string, string> };

export type UiActionResult =
  | { type: "tool"; toolName: string; output: Exclude<ToolOutput, string> }
  | { type: "prompt"; text: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringParams(params: unknown): Record<string, string> {
  if (!isRecord(params)) return {};
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
}

/** The action in a message text, or undefined when the text is ordinary chat. */
export function parseUiAction(text: string): UiAction | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") || !trimmed.endsWith("}")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (!isRecord(value) || !isRecord(value.payload)) return undefined;
  const { payload } = value;
  if (value.type === "tool" && typeof payload.toolName === "string" && payload.toolName !== "") {
    return { type: "tool", toolName: payload.toolName, params: isRecord(payload.params) ? payload.params : {} };
  }
  if (value.type === "prompt") {
    if (typeof payload.prompt === "string") return { type: "prompt", prompt: payload.prompt };
    if (typeof payload.promptName === "string" && payload.promptName !== "") {
      return { type: "prompt", promptName: payload.promptName, params: stringParams(payload.params) };
    }
  }
  return undefined;
}

/**
 * Finds what a UI names: `server/name`, the name the model sees (`mcp_server_tool`), or the
 * bare MCP name on whichever server has it first.
 */
function resolveEntry(manager: McpClientManager, name: string, kind: McpToolEntry["kind"]): McpToolEntry | undefined {
  const entries = manager.toolEntries().filter((e) => e.kind === kind);
  if (name.includes("/")) {
    const ref = parseToolRef(name);
    return entries.find((e) => e.server === ref.server && e.sourceName === ref.tool);
  }
  return entries.find((e) => e.tool.name === name) ?? entries.find((e) => e.sourceName === name);
}

/** Runs a tool action or expands a prompt action (via `prompts/get`). */
export async function runUiAction(manager: McpClientManager, action: UiAction, signal?: AbortSignal): Promise<UiActionResult> {
  if (action.type === "tool") {
    const entry = resolveEntry(manager, action.toolName, "tool");
    if (!entry) {
      return { type: "tool", toolName: action.toolName, output: { content: [{ type: "text", text: `Unknown tool '${action.toolName}'` }], isError: true } };
    }
    const output = await manager.callTool(entry.server, entry.sourceName, action.params, signal ? { signal } : {});
    return { type: "tool", toolName: entry.tool.name, output };
  }
  if ("prompt" in action) return { type: "prompt", text: action.prompt };
  const entry = resolveEntry(manager, action.promptName, "prompt");
  if (!entry) throw new Error(`Unknown prompt '${action.promptName}'`);
  const result = await manager.getPrompt(entry.server, entry.sourceName, action.params, signal);
  return { type: "prompt", text: promptText(result) };
}
