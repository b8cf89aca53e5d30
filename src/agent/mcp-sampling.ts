/**
 * Answers `sampling/createMessage` requests from MCP servers: the agent a server hints at by
 * name answers, else the default agent's model — one plain completion, no tools, so a server
 * can never make nanobot run tools on its behalf.
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
    const messages = request.systemPrompt ? [systemMessage(request.systemPrompt), ...request.messages] : request.messages;
    runtime.logger.info("MCP sampling request", { server: request.server, agent: agentName ?? "defaults", model: modelRef });
    const response = await complete(
      model,
      { messages, maxTokens: request.maxTokens, ...(request.temperature !== undefined ? { temperature: request.temperature } : {}) },
      signal,
    );
    return {
      text: textOf(response.message),
      model: `${response.provider}/${response.model}`,
      stopReason: response.finishReason === "length" ? "maxTokens" : "endTurn",
    };
  };
}
