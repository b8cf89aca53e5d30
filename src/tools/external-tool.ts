/**
 * A tool the caller runs itself (the OpenAI API's `tools[]`, the Go nanobot's external tools):
 * nanobot only offers it to the model. The engine never executes it; a call ends the run with
 * stop reason `external_tool` and goes back to the caller, whose result resumes the turn.
 */
import type { ToolDefinition } from "../core/llm.js";
import type { Tool } from "./tool.js";

export function externalTool(definition: ToolDefinition): Tool {
  return {
    name: definition.name,
    description: definition.description,
    parameters: definition.parameters,
    external: true,
    execute: () => Promise.reject(new Error(`${definition.name} is run by the caller, not by nanobot`)),
  };
}
