/**
 * Agent instructions that come from an MCP prompt (`{ mcpServer, prompt, args }`): fetched each
 * turn, so a server can change the system prompt without a restart.
 */
import type { McpClientManager } from "./manager.js";
import { promptText } from "./result-mapping.js";

export interface PromptInstructions {
  mcpServer: string;
  prompt: string;
  args?: Record<string, string>;
}

/** The prompt's text; throws when the server is unknown or `prompts/get` fails. */
export async function resolvePromptInstructions(
  manager: McpClientManager,
  spec: PromptInstructions,
  signal?: AbortSignal,
): Promise<string> {
  const result = await manager.getPrompt(spec.mcpServer, spec.prompt, spec.args ?? {}, signal);
  return promptText(result);
}
