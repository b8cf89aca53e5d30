/**
 * MCP-UI actions (the Go nanobot's `handleUIAction`): a user message whose whole text is an
 * action JSON, `{"type": "tool"|"prompt", "payload": …}` as an MCP-UI page posts it, is not
 * chat. A tool action runs the named tool without asking the model; a prompt action is
 * replaced by its text (`payload.prompt`), by the messages it carries (`renderedMessages`) or
 * by the MCP prompt it names (`promptName` + `params`, through `prompts/get`). Other types
 * (`intent`, `notify`, `link`) are left as text, as Go leaves them.
 */
import type { Tool } from "../tools/tool.js";
import type { McpClientManager } from "./manager.js";
import { fitToolName, parseToolRef } from "./names.js";
import { promptText } from "./result-mapping.js";
import type { McpToolEntry } from "./tool-adapters.js";

export type UiAction =
  | { type: "tool"; toolName: string; params: Record<string, unknown> }
  | { type: "prompt"; prompt: string }
  | { type: "prompt"; renderedText: string }
  | { type: "prompt"; promptName: string; params: Record<string, string> };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringParams(params: unknown): Record<string, string> {
  if (!isRecord(params)) return {};
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
}

/** The text of MCP prompt messages an action carries (`renderedMessages`), or undefined. */
function renderedText(messages: unknown): string | undefined {
  if (!Array.isArray(messages) || messages.length === 0) return undefined;
  const texts = messages.flatMap((m) => {
    const content = isRecord(m) && isRecord(m.content) ? m.content : undefined;
    return content?.type === "text" && typeof content.text === "string" && content.text !== "" ? [content.text] : [];
  });
  return texts.length > 0 ? texts.join("\n\n") : undefined;
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
    // Go's order: the prompt text, then rendered messages, then a prompt to fetch.
    if (typeof payload.prompt === "string" && payload.prompt !== "") return { type: "prompt", prompt: payload.prompt };
    const rendered = renderedText(payload.renderedMessages);
    if (rendered !== undefined) return { type: "prompt", renderedText: rendered };
    if (typeof payload.promptName === "string" && payload.promptName !== "") {
      return { type: "prompt", promptName: payload.promptName, params: stringParams(payload.params) };
    }
  }
  return undefined;
}

/** Entries of one kind that a UI name may mean: `server/name`, the MCP name, or Go's shown name. */
function entriesNamed(entries: readonly McpToolEntry[], name: string, kind: McpToolEntry["kind"]): McpToolEntry[] {
  const ofKind = entries.filter((e) => e.kind === kind);
  if (name.includes("/")) {
    const ref = parseToolRef(name);
    return ofKind.filter((e) => e.server === ref.server && (e.sourceName === ref.tool || e.exposedName === ref.tool));
  }
  return ofKind.filter((e) => e.sourceName === name || e.exposedName === name);
}

/**
 * The name, among the turn's tools, of the tool a UI names. A page knows its server's MCP
 * names; the turn may show them as `mcp_<server>_<tool>` (Python-style config) or, on a clash,
 * as `<server>_<tool>` (Go-style). A tool the agent is not offered is not found: an action runs
 * only what the model itself could call (permissions and tool selection hold).
 */
export function resolveActionTool(name: string, tools: readonly Pick<Tool, "name">[], entries: readonly McpToolEntry[]): string | undefined {
  const offered = new Set(tools.map((t) => t.name));
  if (offered.has(name)) return name;
  for (const entry of entriesNamed(entries, name, "tool")) {
    const candidates = [entry.tool.name, fitToolName(`${entry.server}_${entry.tool.name}`)];
    const found = candidates.find((c) => offered.has(c));
    if (found) return found;
  }
  return undefined;
}

/**
 * The user message a prompt action stands for. A named prompt must be one of the agent's, as Go
 * looks it up among the agent's servers and its `prompts` list only: a server the agent is
 * offered tools of, or a `prompts` entry (`server`, `server/prompt`, `server/prompt:alias`).
 */
export async function expandPromptAction(
  action: Extract<UiAction, { type: "prompt" }>,
  manager: () => Promise<McpClientManager>,
  tools: readonly Pick<Tool, "name">[],
  signal?: AbortSignal,
  promptRefs: readonly string[] = [],
): Promise<string> {
  if ("prompt" in action) return action.prompt;
  if ("renderedText" in action) return action.renderedText;
  const mcp = await manager();
  // The agent's own `prompts` list first: an alias names the prompt it stands for.
  for (const raw of promptRefs) {
    const r = parseToolRef(raw);
    const name = r.alias !== undefined ? (r.alias === action.promptName ? r.tool : undefined) : r.tool === undefined || r.tool === action.promptName ? action.promptName : undefined;
    if (name === undefined || !mcp.connection(r.server)?.listing.prompts.some((p) => p.name === name)) continue;
    const text = promptText(await mcp.getPrompt(r.server, name, action.params, signal));
    if (text.trim() === "") throw new Error(`MCP-UI prompt action: prompt "${action.promptName}" has no text`);
    return text;
  }
  const offered = new Set(tools.map((t) => t.name));
  // The agent's servers: those it is offered anything of (a Go-style config offers no prompt tools).
  const servers = new Set(mcp.toolEntries().filter((e) => offered.has(e.tool.name)).map((e) => e.server));
  const ref = action.promptName.includes("/") ? parseToolRef(action.promptName) : undefined;
  const wanted = ref?.tool ?? action.promptName;
  const server = [...servers].find((s) => (!ref || ref.server === s) && mcp.connection(s)?.listing.prompts.some((p) => p.name === wanted));
  if (!server) throw new Error(`MCP-UI prompt action: prompt "${action.promptName}" not found among this agent's MCP servers`);
  const result = await mcp.getPrompt(server, wanted, action.params, signal);
  const text = promptText(result);
  if (text.trim() === "") throw new Error(`MCP-UI prompt action: prompt "${action.promptName}" has no text`);
  return text;
}
