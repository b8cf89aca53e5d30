/**
 * Published agents' starter messages (Go's `starterMessages`) as MCP prompts, so any MCP
 * client can offer them: `<agent>-starter-<n>`, no arguments, the message as the user's text.
 */
import type { NanobotConfig } from "../../config/index.js";
import type { PublishedAgent } from "./published-agents.js";
import type { ServedPrompt } from "./server-profile.js";

export function starterPrompts(config: NanobotConfig, agents: readonly PublishedAgent[]): ServedPrompt[] {
  return agents.flatMap(({ agent }) =>
    (config.agents.named[agent]?.starterMessages ?? []).map(
      (text, i): ServedPrompt => ({
        definition: { name: `${agent}-starter-${i + 1}`, title: text, description: `A conversation starter for ${agent}: ${text}` },
        get: () => Promise.resolve({ description: `Starter for ${agent}`, messages: [{ role: "user", content: { type: "text", text } }] }),
      }),
    ),
  );
}
