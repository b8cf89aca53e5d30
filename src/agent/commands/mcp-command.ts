/**
 * `/mcp [list]`, `/mcp connect <server>`, `/mcp disconnect <server>`: runtime control of the
 * configured MCP servers from any face (the Python nanobot's /mcp-connect). A disconnected
 * server's tools leave every following turn until it is connected again. Runtime only, as the
 * Python nanobot's reconnect is: nothing is written to the config, so a restart brings back
 * what the file says — and each reply says so.
 */
import type { McpClientManager } from "../../mcp/manager.js";
import type { CommandInvocation, SlashCommand } from "./registry.js";

const USAGE = "Usage: /mcp [list] | /mcp connect <server> | /mcp disconnect <server>";
const RUNTIME_ONLY = "Until nanobot restarts; the config file is unchanged.";

function describe(manager: McpClientManager, name: string, configured: boolean): string {
  const conn = manager.connection(name);
  const failure = manager.failures().find((f) => f.server === name);
  if (!conn) return `- ${name}: disconnected${configured ? ` (/mcp connect ${name})` : ""}`;
  if (failure) return `- ${name}: failed to start — ${failure.reason.split("\n")[0]}`;
  if (!conn.connected) return `- ${name}: not connected`;
  const tools = toolCount(manager, name);
  return `- ${name}: connected, ${tools} tool${tools === 1 ? "" : "s"}`;
}

function toolCount(manager: McpClientManager, name: string): number {
  return manager.toolEntries().filter((e) => e.server === name && e.kind === "tool").length;
}

export const mcpCommand: SlashCommand = {
  name: "mcp",
  usage: "/mcp [list|connect <server>|disconnect <server>]",
  description: "List the MCP servers, or connect / disconnect one for this run",
  async run({ host, args }: CommandInvocation) {
    const [action = "list", name, ...rest] = args.split(/\s+/).filter(Boolean);
    const configured = host.runtime.config.mcpServers;
    if (action === "list" && name === undefined) {
      const manager = await host.runtime.mcp();
      const names = [...new Set([...Object.keys(configured), ...manager.serverNames()])];
      if (names.length === 0) return "No MCP servers are configured (mcpServers in the config).";
      return ["MCP servers:", ...names.map((n) => describe(manager, n, n in configured))].join("\n");
    }
    if ((action !== "connect" && action !== "disconnect") || !name || rest.length > 0) return USAGE;
    const manager = await host.runtime.mcp();
    if (action === "disconnect") {
      return (await manager.removeServer(name)) ? `Disconnected ${name}; its tools are gone until /mcp connect ${name}. ${RUNTIME_ONLY}` : `${name} is not connected.`;
    }
    const spec = configured[name];
    if (!spec) {
      const known = Object.keys(configured);
      return `No MCP server named ${name} in the config${known.length ? ` (configured: ${known.join(", ")})` : ""}.`;
    }
    if (manager.connection(name)?.connected) return `${name} is already connected.`;
    // A server that failed at start is dropped first, so the retry gets a fresh process.
    await manager.removeServer(name);
    const failure = await manager.addServer(name, spec);
    if (failure !== undefined) {
      await manager.removeServer(name);
      return `Could not connect ${name}: ${failure.split("\n")[0]}`;
    }
    return `Connected ${name} (${toolCount(manager, name)} tools). ${RUNTIME_ONLY}`;
  },
};
