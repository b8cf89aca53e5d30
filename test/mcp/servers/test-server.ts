/**
 * A tiny stdio MCP server for the failure paths the reference servers cannot show: a tool that
 * hangs until cancelled, one that kills the process, a 70-character tool name, JSON-in/JSON-out
 * hook tools, and a slow handshake (`SLOW_HANDSHAKE_MS`). Run with `node --import tsx`.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { LONG_TOOL_NAME } from "./constants.js";

const anyObject = { type: "object" as const, properties: {}, additionalProperties: true };

const TOOLS = [
  { name: "hang", description: "Never answers until cancelled", inputSchema: anyObject },
  { name: "crash", description: "Exits the server process", inputSchema: anyObject },
  { name: "whoami", description: "Returns the server pid", inputSchema: anyObject, annotations: { readOnlyHint: true } },
  { name: LONG_TOOL_NAME, description: "Has a 70-character name", inputSchema: anyObject },
  { name: "hook_tag", description: "Appends the `tag` env/arg to payload.trace", inputSchema: anyObject },
  { name: "hook_text", description: "Returns the payload as JSON text with text_hook: true", inputSchema: anyObject },
  { name: "hook_fail", description: "Always fails", inputSchema: anyObject },
  { name: "hook_answer", description: "Adds a response to a request payload", inputSchema: anyObject },
  { name: "cancel_count", description: "How many cancellations this process received", inputSchema: anyObject },
  { name: "add_tool", description: "Adds a tool named `added` and sends tools/list_changed", inputSchema: anyObject },
];

let cancellations = 0;

function handle(
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
  toolsChanged: () => Promise<void>,
): Promise<CallToolResult> | CallToolResult {
  switch (name) {
    case "hang":
      return new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => {
          cancellations++;
          reject(new Error("cancelled"));
        });
      });
    case "crash":
      process.exit(1);
      break;
    case "whoami":
      return { content: [{ type: "text", text: String(process.pid) }] };
    case LONG_TOOL_NAME:
      return { content: [{ type: "text", text: "long ok" }] };
    case "hook_tag": {
      const trace = Array.isArray(args.trace) ? args.trace : [];
      return { content: [], structuredContent: { ...args, trace: [...trace, "tag"] } };
    }
    case "hook_text":
      return { content: [{ type: "text", text: JSON.stringify({ ...args, text_hook: true }) }] };
    case "hook_fail":
      return { content: [{ type: "text", text: "hook exploded" }], isError: true };
    case "hook_answer":
      return { content: [], structuredContent: { ...args, response: { content: "answered by hook" } } };
    case "cancel_count":
      return { content: [{ type: "text", text: String(cancellations) }] };
    case "add_tool":
      TOOLS.push({ name: "added", description: "Added at runtime", inputSchema: anyObject });
      return toolsChanged().then(() => ({ content: [{ type: "text", text: "added" }] }));
    case "added":
      return { content: [{ type: "text", text: "added works" }] };
    default:
      return { content: [{ type: "text", text: `unknown tool ${name}` }], isError: true };
  }
}

async function main(): Promise<void> {
  const delay = Number(process.env.SLOW_HANDSHAKE_MS ?? "0");
  if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
  const server = new Server({ name: "nanobot-test-server", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, (req, extra) =>
    handle(req.params.name, req.params.arguments ?? {}, extra.signal, () => server.sendToolListChanged()),
  );
  await server.connect(new StdioServerTransport());
  // Exit as soon as the client closes stdin, so closing a manager is quick.
  process.stdin.once("end", () => process.exit(0));
}

await main();
