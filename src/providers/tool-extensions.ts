/**
 * Go nanobot `toolExtensions` on the wire: an agent may add provider-specific keys to a tool
 * (`cache_control`, a provider-defined `type` such as Anthropic's web search). Keys are merged
 * over the adapter's own form; `remove: [key…]` deletes keys; a `type` other than the adapter's
 * default (`function`, `custom`) makes it a provider-defined tool, so description and schema go.
 */
import type { ToolDefinition } from "../core/llm.js";

const SCHEMA_KEYS = ["description", "input_schema", "parameters", "function"];

export function applyToolExtensions<T extends Record<string, unknown>>(wire: T, tool: ToolDefinition): T {
  const ext = tool.extensions;
  if (!ext) return wire;
  const out: Record<string, unknown> = { ...wire };
  const type = ext.type;
  if (typeof type === "string" && type !== "" && type !== "function" && type !== "custom") {
    for (const key of SCHEMA_KEYS) delete out[key];
  }
  for (const [key, value] of Object.entries(ext)) {
    if (key === "remove") continue;
    if (value !== "" && value !== undefined) out[key] = value;
  }
  if (Array.isArray(ext.remove)) for (const key of ext.remove) if (typeof key === "string") delete out[key];
  return out as T;
}
