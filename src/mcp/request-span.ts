/**
 * The client span of one MCP request (`tools/call <tool>`, `prompts/get <prompt>`,
 * `resources/read <uri>`) with the MCP semantic-convention attributes. The HTTP transports'
 * `fetch` (see transport.ts) sends its `traceparent`, so the server's spans join the trace.
 */
import { SpanKind, withSpan } from "../core/tracing/tracer.js";
import type { Span } from "../core/tracing/tracer.js";
import { detectTransportType, serverUrl } from "./server-spec.js";
import type { McpServerSpec } from "./types.js";

export interface McpRequestTarget {
  /** The configured server name. */
  server: string;
  spec: McpServerSpec;
  env: Record<string, string | undefined>;
}

export type McpMethod = "tools/call" | "prompts/get" | "resources/read";

const TARGET_KEY: Record<McpMethod, string> = {
  "tools/call": "gen_ai.tool.name",
  "prompts/get": "gen_ai.prompt.name",
  "resources/read": "mcp.resource.uri",
};

function serverAttributes(target: McpRequestTarget): Record<string, string | number> {
  if (detectTransportType(target.spec) === "stdio") return { "network.transport": "pipe" };
  try {
    const url = new URL(serverUrl(target.spec, target.env) ?? "");
    const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
    return { "network.transport": "tcp", "server.address": url.hostname, "server.port": port };
  } catch {
    return { "network.transport": "tcp" };
  }
}

export function withMcpRequestSpan<T>(target: McpRequestTarget, method: McpMethod, name: string, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  return withSpan(
    `${method} ${name}`,
    {
      kind: SpanKind.client,
      attributes: {
        "mcp.method.name": method,
        [TARGET_KEY[method]]: name,
        ...(method === "tools/call" ? { "gen_ai.operation.name": "execute_tool" } : {}),
        "nanobot.mcp.server": target.server,
        ...serverAttributes(target),
      },
    },
    fn,
  );
}
