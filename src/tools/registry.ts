/**
 * The tools of one run, by name: lookup with near-miss suggestions, and the provider-ready
 * definitions (schemas fixed once, at registration).
 */
import type { ToolDefinition } from "../core/llm.js";
import { suggestToolName } from "./near-miss.js";
import { fixToolSchema } from "./schema-fix.js";
import type { Tool } from "./tool.js";

/** A lookup that either found the tool or explains, for the model, why not. */
export type ToolLookup = { ok: true; tool: Tool } | { ok: false; error: string };

/**
 * A tool's definition, the same object while its schema (by identity), name and description
 * stay the same: runs build a registry per turn, turn-bound tools (`message`, `spawn`) are new
 * objects every turn, and downstream caches (token counts, serialised request bodies) are keyed
 * by these definitions.
 */
const definitionsBySchema = new WeakMap<object, Map<string, ToolDefinition>>();

function stableDefinition(name: string, description: string, parameters: ToolDefinition["parameters"]): ToolDefinition {
  let byName = definitionsBySchema.get(parameters);
  const known = byName?.get(name);
  if (known && known.description === description) return known;
  const definition: ToolDefinition = { name, description, parameters };
  if (!byName) definitionsBySchema.set(parameters, (byName = new Map()));
  byName.set(name, definition);
  return definition;
}

export class ToolRegistry {
  private readonly tools = new Map<string, Tool>();
  private readonly definitionsByName = new Map<string, ToolDefinition>();
  private definitionsCache: ToolDefinition[] | undefined;

  constructor(tools: Iterable<Tool> = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Adds or replaces a tool; its schema is fixed here so every request reuses the result. */
  register(tool: Tool): void {
    const fixed: Tool = { ...tool, parameters: fixToolSchema(tool.parameters) };
    // Keep `execute` bound to the original object: class-based tools rely on `this`.
    fixed.execute = tool.execute.bind(tool);
    this.tools.set(tool.name, fixed);
    this.definitionsByName.set(tool.name, stableDefinition(tool.name, tool.description, fixed.parameters));
    this.definitionsCache = undefined;
  }

  unregister(name: string): boolean {
    this.definitionsCache = undefined;
    this.definitionsByName.delete(name);
    return this.tools.delete(name);
  }

  get(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  has(name: string): boolean {
    return this.tools.has(name);
  }

  get size(): number {
    return this.tools.size;
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  list(): Tool[] {
    return [...this.tools.values()];
  }

  /** Definitions as sent to the model (stable array until the registry changes). */
  definitions(): ToolDefinition[] {
    this.definitionsCache ??= [...this.definitionsByName.values()];
    return this.definitionsCache;
  }

  /** Finds a tool; an unknown name yields `Error: Tool 'x' not found. Did you mean 'y'?`. */
  lookup(name: string): ToolLookup {
    const tool = this.tools.get(name);
    if (tool) return { ok: true, tool };
    const suggestion = suggestToolName(name, this.names());
    const hint = suggestion
      ? ` Did you mean '${suggestion}'?`
      : this.size > 0
        ? ` Available tools: ${this.names().join(", ")}.`
        : "";
    return { ok: false, error: `Error: Tool '${name}' not found.${hint}` };
  }
}
