/**
 * Answers `sampling/createMessage` requests from MCP servers: the agent a server hints at by
 * name answers (its model, instructions, output schema), else the default agent's model — one
 * plain completion, no tools, so a server can never make nanobot run tools on its behalf.
 */
import { defaultAgentName } from "../config/config-helpers.js";
import { complete } from "../core/llm.js";
import { systemMessage, textOf } from "../core/message-helpers.js";
import type { SamplingHandler } from "../mcp/types.js";
import type { Runtime } from "./runtime.js";

export function createSamplingHandler(runtime: Runtime): SamplingHandler {
  return async (request, signal) => {
    const named = runtime.config.agents.named;
    const hinted = request.modelHints.find((hint) => named[hint] !== undefined);
    const agentName = hinted ?? defaultAgentName(runtime.config);
    const agent = agentName ? named[agentName] : undefined;
    const modelRef = runtime.modelRefFor(agent);
    const model = runtime.registry.resolveModel(modelRef, { retry: { mode: runtime.config.agents.defaults.providerRetryMode } });
    // A hinted Go agent answers as itself (the Go research bot samples "planner", "writer"…):
    // its instructions lead the system prompt and its output schema and sampling fields apply.
    const profile = hinted ? await runtime.resolveAgent(hinted) : undefined;
    const system = [profile?.instructions, request.systemPrompt].filter(Boolean).join("\n\n");
    const messages = system ? [systemMessage(system), ...request.messages] : request.messages;
    runtime.logger.info("MCP sampling request", { server: request.server, agent: agentName ?? "defaults", model: modelRef });
    const temperature = request.temperature ?? agent?.temperature;
    const response = await complete(
      model,
      {
        messages,
        maxTokens: profile && request.maxTokens > profile.maxTokens ? profile.maxTokens : request.maxTokens,
        ...(temperature !== undefined ? { temperature } : {}),
        ...(profile?.topP !== undefined ? { topP: profile.topP } : {}),
        ...(profile?.reasoningEffort ? { reasoningEffort: profile.reasoningEffort } : {}),
        ...(profile?.output ? { output: profile.output } : {}),
      },
      signal,
    );
    return {
      text: textOf(response.message),
      model: `${response.provider}/${response.model}`,
      stopReason: response.finishReason === "length" ? "maxTokens" : "endTurn",
    };
  };
}
