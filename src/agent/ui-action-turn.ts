/**
 * MCP-UI actions in the one turn path (every face: CLI, gateway, web UI, MCP server, channels).
 * - A prompt action is expanded before the turn begins; the expanded text is the user message
 *   that is stored and sent (Go keeps it in the saved message too, so it is fetched once).
 * - A tool action answers the turn's first model call with a tool call in the model's place, as
 *   Go fakes the assistant response: the engine runs the tool with everything a model's call
 *   gets (permissions, message hooks, truncation, events, checkpoints). The turn then ends with
 *   the result's text as the answer instead of a second model call, so clicking a button in a
 *   page costs no model request and the user sees what the tool said.
 */
import type { LLMRequest, ModelResponse } from "../core/llm.js";
import { toolCallId } from "../core/ids.js";
import { assistantMessage, textOf } from "../core/message-helpers.js";
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
): Promise<string | UserContentPart[]> {
  const action = actionOf(content);
  if (action?.type !== "prompt") return content;
  return expandPromptAction(action, () => runtime.mcp(), tools, signal);
}

function answer(message: ModelResponse["message"], finishReason: ModelResponse["finishReason"]): ModelResponse {
  return { message, finishReason, usage: { promptTokens: 0, completionTokens: 0 }, provider: "nanobot", model: "mcp-ui-action" };
}

/**
 * The hook that plays the model for a tool action in the turn's last message, or undefined
 * when the turn is ordinary chat. `tools` are the turn's tools: a name the agent is not offered
 * stays as given and the engine answers it as an unknown tool.
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
    beforeIteration(ctx: HookContext, request: LLMRequest) {
      if (ctx.iteration === 1) return { response: answer(assistantMessage("", [call]), "tool_calls") };
      // Only the call right after this tool's result is answered; a message injected meanwhile goes to the model.
      const next = request.messages.at(-1);
      if (next?.role !== "tool" || next.toolCallId !== call.id) return undefined;
      const text = textOf(next.content).trim();
      return { response: answer(assistantMessage(text || `${name} finished without text.`), "stop") };
    },
  };
}
