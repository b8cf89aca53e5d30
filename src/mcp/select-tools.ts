/**
 * Resolves an agent's tool references (`server`, `server/tool`, `server/tool:alias`) against
 * the manager's current tools.
 */
import type { Tool } from "../tools/tool.js";
import type { McpClientManager } from "./manager.js";
import { fitToolName, parseToolRef } from "./names.js";

export interface SelectedTools {
  tools: Tool[];
  /** References that matched no server or tool (the caller decides whether to warn). */
  unresolved: string[];
}

/**
 * `server` selects everything the server exposes (tools, prompts, resources); `server/tool`
 * one MCP tool; `:alias` renames it for the model. Duplicates keep the first occurrence.
 */
export function selectTools(manager: McpClientManager, refs: readonly string[]): SelectedTools {
  const tools: Tool[] = [];
  const unresolved: string[] = [];
  const seen = new Set<string>();
  const add = (tool: Tool): void => {
    if (seen.has(tool.name)) return;
    seen.add(tool.name);
    tools.push(tool);
  };
  const entries = manager.toolEntries();
  for (const raw of refs) {
    const ref = parseToolRef(raw);
    if (ref.tool === undefined || ref.tool === "*") {
      const matches = entries.filter((e) => e.server === ref.server);
      if (matches.length === 0 && !manager.serverNames().includes(ref.server)) unresolved.push(raw);
      for (const e of matches) add(e.tool);
      continue;
    }
    const entry = manager.findEntry(ref.server, ref.tool);
    if (!entry) {
      unresolved.push(raw);
      continue;
    }
    add(ref.alias ? { ...entry.tool, name: fitToolName(ref.alias), execute: entry.tool.execute.bind(entry.tool) } : entry.tool);
  }
  return { tools, unresolved };
}
