/**
 * Which agents nanobot publishes as `chat-with-<agent>` tools, by the Go nanobot's entrypoint
 * rules (see `publishedAgentNames`); a config without named agents still serves the default
 * assistant (`nanobot`).
 */
import type { NanobotConfig } from "../../config/index.js";
import { fitToolName, parseToolRef } from "../../mcp/names.js";
import { publishesServerItems } from "./published-mcp.js";

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
  const names = publishedAgentNames(config);
  const out: PublishedAgent[] = [...new Set(names)].map((agent) => ({
    agent,
    toolName: chatToolName(agent),
    description: describe(config, agent),
  }));
  // `publish.tools` may name an agent as Go does (`agent`, `agent/chat-with-agent`, with
  // `:alias`): Go lists an agent as a server whose one tool is `chat-with-<agent>`.
  for (const raw of config.publish.tools ?? []) {
    const ref = parseToolRef(raw);
    if (config.agents.named[ref.server] === undefined) continue;
    if (ref.tool !== undefined && ref.tool !== "*" && ref.tool !== `chat-with-${ref.server}`) continue;
    const toolName = ref.alias ? fitToolName(ref.alias) : chatToolName(ref.server);
    if (out.some((a) => a.toolName === toolName)) continue;
    out.push({ agent: ref.server, toolName, description: describe(config, ref.server) });
  }
  return out;
}

/**
 * The Go nanobot's entrypoint rules: the agents named in `publish.entrypoint` (its `server/tool`
 * entries are re-exported tools, see published-mcp.ts); without it, the one chat agent; with
 * several and no entrypoint (which Go refuses; config loading warns) the default agent
 * (`default: true`), else the first chat agent; with none, the default assistant — unless the
 * config re-exports MCP servers (`publish.mcpServers`, `publish.tools`…), then no agent.
 */
export function publishedAgentNames(config: NanobotConfig): string[] {
  const named = config.agents.named;
  const entrypoint = config.publish.entrypoint ?? [];
  const entry = entrypoint.filter((name) => name === DEFAULT_AGENT || named[name] !== undefined);
  if (entry.length > 0) return entry;
  // An entrypoint of tools only publishes no agent.
  if (entrypoint.length > 0) return [];
  const chat = Object.keys(named).filter((name) => named[name]?.chat !== false);
  if (chat.length === 1) return chat;
  // No chat agent: a config that re-exports MCP servers is an aggregator (Go publishes only
  // them); otherwise the default assistant answers.
  if (chat.length === 0) return publishesServerItems(config) ? [] : [DEFAULT_AGENT];
  const marked = chat.find((name) => named[name]?.default === true);
  return [marked ?? chat[0]!];
}

function describe(config: NanobotConfig, agent: string): string {
  const own = config.agents.named[agent]?.description ?? (agent === DEFAULT_AGENT ? config.publish.description : undefined);
  const base = own ?? `Chat with the ${agent} agent.`;
  return `${base} Send a prompt (and optional attachments by URL); the reply is the agent's final answer. The conversation continues across calls in this MCP session.`;
}
