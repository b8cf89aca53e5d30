/**
 * Names the model sees for MCP-backed tools, and the `server/tool:alias` references agents use.
 * Providers accept `[A-Za-z0-9_-]{1,64}`; longer names keep a readable prefix and gain a short
 * hash of the full name so two long names never collide.
 */
import { createHash } from "node:crypto";

export const MAX_TOOL_NAME_LENGTH = 64;
const HASH_LENGTH = 8;

/** Replaces every character outside `[A-Za-z0-9_-]` with `_`. */
export function sanitizeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_");
}

export function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, HASH_LENGTH);
}

/** Sanitises and, when over 64 characters, truncates and appends `_<hash of the original>`. */
export function fitToolName(name: string): string {
  const clean = sanitizeName(name);
  if (clean.length <= MAX_TOOL_NAME_LENGTH && clean.length > 0) return clean;
  const prefix = clean.slice(0, MAX_TOOL_NAME_LENGTH - HASH_LENGTH - 1);
  return `${prefix}_${shortHash(name)}`;
}

export type McpToolKind = "tool" | "prompt" | "resource";

/** `mcp_<server>_<tool>`, `mcp_<server>_prompt_<name>`, `mcp_<server>_resource_<name>`. */
export function mcpToolName(server: string, name: string, kind: McpToolKind = "tool"): string {
  const middle = kind === "tool" ? "" : `${kind}_`;
  return fitToolName(`mcp_${server}_${middle}${name}`);
}

/** An agent's reference to MCP tools: a whole server, or one tool with an optional alias. */
export interface ToolRef {
  server: string;
  tool?: string;
  alias?: string;
}

/** Parses `server`, `server/tool` or `server/tool:alias`. */
export function parseToolRef(ref: string): ToolRef {
  const slash = ref.indexOf("/");
  if (slash < 0) return { server: ref.trim() };
  const server = ref.slice(0, slash).trim();
  const rest = ref.slice(slash + 1);
  const colon = rest.lastIndexOf(":");
  if (colon < 0) return { server, tool: rest.trim() };
  const alias = rest.slice(colon + 1).trim();
  return { server, tool: rest.slice(0, colon).trim(), ...(alias ? { alias } : {}) };
}
