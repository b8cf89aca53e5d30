/**
 * Resolves an agent's tool references (`server`, `server/tool`, `server/tool:alias`) against
 * the manager's current tools. With Go naming (a Go-style config) tools keep their bare MCP
 * names; only when two of the agent's servers offer the same name does each become
 * `<server>_<name>`, so one agent never sees two tools with one name.
 */
import type { Tool } from "../tools/tool.js";
import type { McpClientManager } from "./manager.js";
import { fitToolName, parseToolRef } from "./names.js";
import type { McpToolEntry } from "./tool-adapters.js";

export interface SelectedTools {
  tools: Tool[];
  /** References that matched no server or tool (the caller decides whether to warn). */
  unresolved: string[];
}

function renamed(tool: Tool, name: string): Tool {
  return name === tool.name ? tool : { ...tool, name, execute: tool.execute.bind(tool) };
}

/**
 * `server` selects everything the server exposes (tools, prompts, resources); `server/tool`
 * one MCP tool (by its MCP name, or as `toolOverrides` / `toolPrefix` show it); `:alias`
 * renames it for the model. Duplicates keep the first occurrence.
 */
export function selectTools(manager: McpClientManager, refs: readonly string[]): SelectedTools {
  const picked: Array<{ entry: McpToolEntry; tool: Tool }> = [];
  const unresolved: string[] = [];
  const seen = new Set<McpToolEntry["tool"]>();
  const add = (entry: McpToolEntry, tool: Tool): void => {
    if (seen.has(entry.tool) && tool === entry.tool) return;
    seen.add(entry.tool);
    picked.push({ entry, tool });
  };
  const entries = manager.toolEntries();
  for (const raw of refs) {
    const ref = parseToolRef(raw);
    if (ref.tool === undefined || ref.tool === "*") {
      const matches = entries.filter((e) => e.server === ref.server);
      if (matches.length === 0 && !manager.serverNames().includes(ref.server)) unresolved.push(raw);
      for (const e of matches) add(e, e.tool);
      continue;
    }
    const entry = manager.findEntry(ref.server, ref.tool);
    if (!entry) {
      unresolved.push(raw);
      continue;
    }
    add(entry, ref.alias ? renamed(entry.tool, fitToolName(ref.alias)) : entry.tool);
  }
  if (manager.toolNaming === "go") {
    const servers = new Map<string, Set<string>>();
    for (const p of picked) servers.set(p.tool.name, (servers.get(p.tool.name) ?? new Set()).add(p.entry.server));
    for (const p of picked) {
      if ((servers.get(p.tool.name)?.size ?? 0) > 1) p.tool = renamed(p.tool, fitToolName(`${p.entry.server}_${p.tool.name}`));
    }
  }
  const tools: Tool[] = [];
  const names = new Set<string>();
  for (const p of picked) {
    if (names.has(p.tool.name)) continue;
    names.add(p.tool.name);
    tools.push(p.tool);
  }
  return { tools, unresolved };
}
