/**
 * A stdio MCP server that misbehaves on purpose, chosen by `FAULT`:
 *   `healthy` — `echo` answers; `crash` — `explode` kills the process mid-call (no answer);
 *   `hang` — `wait` never answers, even when cancelled; `invalid` — lists tools with broken
 *   input schemas next to a good one, and `huge` returns `mb` MB of text;
 *   `mute` — reads the handshake and never answers it.
 * Every mode but `mute` also has `echo`, so the tests can tell "server gone" from "tool failed".
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const fault = process.env.FAULT ?? "healthy";
const anyObject = { type: "object" as const, properties: {}, additionalProperties: true };
const echo = { name: "echo", description: "Echoes `text`", inputSchema: { type: "object" as const, properties: { text: { type: "string" } } } };

function toolsFor(mode: string): unknown[] {
  if (mode === "crash") return [echo, { name: "explode", description: "Exits mid-call", inputSchema: anyObject }];
  if (mode === "hang") return [echo, { name: "wait", description: "Never answers", inputSchema: anyObject }];
  if (mode === "invalid") {
    return [
      echo,
      { name: "huge", description: "Returns `mb` MB of text", inputSchema: anyObject },
      { name: "bad_type", description: "Schema is not an object schema", inputSchema: { type: "string" } },
      { name: "bad_props", description: "Properties is not an object", inputSchema: { type: "object", properties: 42 } },
      { name: "no_schema", description: "No input schema at all" },
    ];
  }
  return [echo];
}

function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> | CallToolResult {
  if (name === "echo") return { content: [{ type: "text", text: `echo: ${String(args.text ?? "")}` }] };
  if (name === "explode") process.exit(3);
  if (name === "wait") return new Promise<CallToolResult>(() => undefined);
  if (name === "huge") return { content: [{ type: "text", text: "x".repeat(Math.round(Number(args.mb ?? 1) * 1024 * 1024)) }] };
  return { content: [{ type: "text", text: `unknown tool ${name}` }], isError: true };
}

async function main(): Promise<void> {
  if (fault === "mute") {
    // Keep stdin open and say nothing: the host's handshake limit must end the wait.
    process.stdin.resume();
    return;
  }
  const server = new Server({ name: `faulty-${fault}`, version: "1.0.0" }, { capabilities: { tools: {} } });
  // The listing is returned as-is: invalid schemas must reach the host to test its handling.
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: toolsFor(fault) }) as never);
  server.setRequestHandler(CallToolRequestSchema, (req) => call(req.params.name, req.params.arguments ?? {}));
  await server.connect(new StdioServerTransport());
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
