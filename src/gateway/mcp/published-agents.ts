/**
 * Which agents nanobot publishes as `chat-with-<agent>` tools: the `publish.entrypoint` list
 * when set, else every named agent that has not opted out with `chat: false`, else the default
 * assistant (`nanobot`) alone — so a config without named agents still serves one tool.
 */
import type { NanobotConfig } from "../../config/index.js";
import { fitToolName } from "../../mcp/names.js";

export interface PublishedAgent {
  /** The agent name for `TurnRequest.agent` (`nanobot` = the default agent). */
  agent: string;
  /** `chat-with-<agent>`, sanitised to `[A-Za-z0-9_-]`, ≤ 64 characters. */
  toolName: string;
  description: string;
}

export const DEFAULT_AGENT = "nanobot";

/** `chat-with-<agent>` as a legal tool name. */
export function chatToolName(agent: string): string {
  return fitToolName(`chat-with-${agent}`);
}

export function publishedAgents(config: NanobotConfig): PublishedAgent[] {
  const named = config.agents.named;
  const entry = (config.publish.entrypoint ?? []).filter((name) => name === DEFAULT_AGENT || named[name] !== undefined);
  const names =
    entry.length > 0 ? entry : Object.keys(named).filter((name) => named[name]?.chat !== false);
  if (names.length === 0) names.push(DEFAULT_AGENT);
  return [...new Set(names)].map((agent) => ({
    agent,
    toolName: chatToolName(agent),
    description: describe(config, agent),
  }));
}

function describe(config: NanobotConfig, agent: string): string {
  const own = config.agents.named[agent]?.description ?? (agent === DEFAULT_AGENT ? config.publish.description : undefined);
  const base = own ?? `Chat with the ${agent} agent.`;
  return `${base} Send a prompt (and optional attachments by URL); the reply is the agent's final answer. The conversation continues across calls in this MCP session.`;
}
