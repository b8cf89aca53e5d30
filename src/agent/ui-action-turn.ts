/**
 * MCP-UI actions in the one turn path (every face: CLI, gateway, web UI, MCP server, channels).
 * - A prompt action is expanded before the turn begins; the expanded text is the user message
 *   that is stored and sent (Go keeps it in the saved message too, so it is fetched once).
 * - A tool action answers the turn's first model call with a tool call in the model's place, as
 *   Go fakes the assistant response: the engine runs the tool with everything a model's call
 *   gets (permissions, message hooks, truncation, events, checkpoints). Then, as in Go
 *   (pkg/agents/run.go handleUIAction: the faked response's tool call is run and the loop goes
 *   on), the model is called with the action, the call and its result, and its answer ends the
 *   turn: the button's work costs no model call, the model's comment on it does.
 */
import type { ModelResponse } from "../core/llm.js";
import { toolCallId } from "../core/ids.js";
import { assistantMessage } from "../core/message-helpers.js";
import type { Message, ToolCallPart, UserContentPart } from "../core/messages.js";
import type { AgentHooks, HookContext } from "../engine/hooks.js";
import { expandPromptAction, parseUiAction, resolveActionTool } from "../mcp/ui-actions.js";
import type { UiAction } from "../mcp/ui-actions.js";
import type { Tool } from "../tools/tool.js";
import type { Runtime } from "./runtime.js";

/** The action a message's content is, when it is one text (Go: exactly one text item). */
function actionOf(content: string | readonly UserContentPart[]): UiAction | undefined {
  if (typeof content === "string") return parseUiAction(content);
  const only = content.length === 1 ? content[0] : undefined;
  return only?.type === "text" ? parseUiAction(only.text) : undefined;
}

/** The content a turn stores and sends: a prompt action's expansion, anything else unchanged. */
export async function expandUiPrompt(
  runtime: Pick<Runtime, "mcp">,
  tools: readonly Tool[],
  content: string | UserContentPart[],
  signal?: AbortSignal,
  promptRefs: readonly string[] = [],
): Promise<string | UserContentPart[]> {
  const action = actionOf(content);
  if (action?.type !== "prompt") return content;
  return expandPromptAction(action, () => runtime.mcp(), tools, signal, promptRefs);
}

function answer(message: ModelResponse["message"], finishReason: ModelResponse["finishReason"]): ModelResponse {
  return { message, finishReason, usage: { promptTokens: 0, completionTokens: 0 }, provider: "nanobot", model: "mcp-ui-action" };
}

/**
 * The hook that plays the model's first call for a tool action in the turn's last message, or
 * undefined when the turn is ordinary chat. `tools` are the turn's tools: a name the agent is
 * not offered stays as given and the engine answers it as an unknown tool (the model reads that).
 */
export async function uiToolActionHook(
  runtime: Pick<Runtime, "mcp" | "config">,
  messages: readonly Message[],
  tools: readonly Tool[],
): Promise<AgentHooks | undefined> {
  const last = messages.at(-1);
  if (last?.role !== "user") return undefined;
  const action = actionOf(last.content);
  if (action?.type !== "tool") return undefined;
  const hasServers = Object.keys(runtime.config.mcpServers).length > 0;
  const entries = hasServers && !tools.some((t) => t.name === action.toolName) ? (await runtime.mcp()).toolEntries() : [];
  const name = resolveActionTool(action.toolName, tools, entries) ?? action.toolName;
  const call: ToolCallPart = { type: "toolCall", id: toolCallId(), name, arguments: action.params, rawArguments: JSON.stringify(action.params) };
  return {
    beforeIteration(ctx: HookContext) {
      return ctx.iteration === 1 ? { response: answer(assistantMessage("", [call]), "tool_calls") } : undefined;
    },
  };
}
