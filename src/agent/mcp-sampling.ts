/**
 * Answers `sampling/createMessage` requests from MCP servers. A named agent the server hints at
 * answers as in Go: it runs its own full loop with its own tools (sampled-agent-turn.ts) — the
 * config's author chose that agent and its tools. Any other request gets one plain completion
 * from the default agent's model, no tools, so an unnamed request never makes nanobot run tools.
 */
import { defaultAgentName } from "../config/config-helpers.js";
import { complete } from "../core/llm.js";
import { systemMessage, textOf } from "../core/message-helpers.js";
import type { SamplingHandler } from "../mcp/types.js";
import type { Runtime } from "./runtime.js";
import { endsWithUser, runSampledAgent } from "./sampled-agent-turn.js";

export function createSamplingHandler(runtime: Runtime): SamplingHandler {
  return async (request, signal) => {
    const named = runtime.config.agents.named;
    const hinted = request.modelHints.find((hint) => named[hint] !== undefined);
    const agentName = hinted ?? defaultAgentName(runtime.config);
    if (hinted && endsWithUser(request.messages)) {
      runtime.logger.info("MCP sampling request runs an agent", { server: request.server, agent: hinted });
      return runSampledAgent(runtime, hinted, request, signal);
    }
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
        maxTokens: profile && !profile.omitMaxTokens && request.maxTokens > profile.maxTokens ? profile.maxTokens : request.maxTokens,
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
