/**
 * The SDK's `McpError` writes "MCP error <code>: " into its message, SDK servers send that
 * message as the JSON-RPC error text, and the receiving client's `McpError` adds the prefix
 * again. One prefix is enough to read: these helpers keep exactly one.
 */
import { errorMessage } from "../core/errors.js";

const PREFIX = /^MCP error -?\d+: /;

/** The text without any leading "MCP error <code>: " prefixes (what goes on the wire). */
export function withoutMcpErrorPrefix(text: string): string {
  let out = text;
  while (PREFIX.test(out)) out = out.replace(PREFIX, "");
  return out;
}

/** An error's message with at most one "MCP error <code>: " prefix (what people read). */
export function mcpErrorText(err: unknown): string {
  const text = errorMessage(err);
  const prefix = PREFIX.exec(text)?.[0];
  return prefix ? prefix + withoutMcpErrorPrefix(text) : text;
}
