/** What `nanobot mcp list` prints: each server's tools as the model sees them, or why it failed. */
import { McpClientManager } from "./manager.js";
import { unmatchedEnabledTools } from "./tool-adapters.js";
import type { McpManagerOptions, McpServersConfig } from "./types.js";

export interface ListedTool {
  /** The name the model sees (`mcp_<server>_<tool>`). */
  name: string;
  description: string;
  /** The tool, prompt or resource name on the server. */
  sourceTool: string;
  kind: "tool" | "prompt" | "resource";
}

export interface ListedServer {
  server: string;
  tools: ListedTool[];
  error?: string;
  /** `enabledTools` entries that name no tool of this server (they expose nothing). */
  unmatchedEnabledTools?: string[];
}

/** Connects to every server, lists what it exposes, and closes everything again. */
export async function listServers(config: McpServersConfig, options: McpManagerOptions = {}): Promise<ListedServer[]> {
  const manager = new McpClientManager(config, options);
  try {
    const failures = new Map((await manager.start()).map((f) => [f.server, f.reason]));
    const entries = manager.toolEntries();
    return manager.serverNames().map((server) => {
      const error = failures.get(server);
      const tools = entries
        .filter((e) => e.server === server)
        .map((e) => ({ name: e.tool.name, description: e.tool.description, sourceTool: e.sourceName, kind: e.kind }));
      const conn = manager.connection(server);
      const unmatched = error === undefined && conn ? unmatchedEnabledTools(conn) : [];
      return { server, tools, ...(error !== undefined ? { error } : {}), ...(unmatched.length > 0 ? { unmatchedEnabledTools: unmatched } : {}) };
    });
  } finally {
    await manager.close();
  }
}
