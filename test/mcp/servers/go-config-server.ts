/**
 * A small MCP server standing in for the servers of the Go nanobot examples (a store, Hugging
 * Face, the research manager): initialize `instructions`, tools (an echoing catalog, 60 KiB
 * output with and without the skip-truncation `_meta`), a prompt, a resource and a template.
 * stdio by default; `--http <port>` serves Streamable HTTP on 127.0.0.1 (stateless) instead.
 * Run with `node --import tsx`. `SERVER_NAME` and `SERVER_INSTRUCTIONS` vary it per test.
 */
import { createServer } from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

export const BIG_BYTES = 60 * 1024;
const anyObject = { type: "object" as const, properties: { query: { type: "string" } }, additionalProperties: true };
const name = process.env.SERVER_NAME ?? "go-config-server";
const instructions = process.env.SERVER_INSTRUCTIONS ?? `Use the ${name} catalog tool for every product question.`;

function bigText(): string {
  // Numbered lines, so a test can tell where the head ends.
  let out = "";
  for (let i = 0; out.length < BIG_BYTES; i++) out += `line ${String(i).padStart(5, "0")} ${"x".repeat(40)}\n`;
  return out.slice(0, BIG_BYTES);
}

function call(tool: string, args: Record<string, unknown>): CallToolResult {
  switch (tool) {
    case "catalog":
      return { content: [{ type: "text", text: `${name} catalog: ${String(args.query ?? "")}` }] };
    case "big":
      return { content: [{ type: "text", text: bigText() }] };
    case "big_skip":
      return { content: [{ type: "text", text: bigText(), _meta: { "ai.nanobot.meta/skip-truncation": true } }] };
    case "medium":
      return { content: [{ type: "text", text: "m".repeat(20_000) }] };
    default:
      return { isError: true, content: [{ type: "text", text: `unknown tool ${tool}` }] };
  }
}

function build(): Server {
  const server = new Server({ name, version: "2.0.0" }, { capabilities: { tools: {}, prompts: {}, resources: {} }, instructions });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [
      { name: "catalog", description: "Searches the catalog", inputSchema: anyObject },
      { name: "big", description: "Returns 60 KiB of text", inputSchema: anyObject },
      { name: "big_skip", description: "Returns 60 KiB of text that must not be cut", inputSchema: anyObject },
      { name: "medium", description: "Returns 20,000 characters", inputSchema: anyObject },
    ],
  }));
  server.setRequestHandler(CallToolRequestSchema, (req) => call(req.params.name, req.params.arguments ?? {}));
  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: [{ name: "system", description: "A system prompt", arguments: [{ name: "tone", required: true }] }],
  }));
  server.setRequestHandler(GetPromptRequestSchema, (req) => ({
    messages: [{ role: "user", content: { type: "text", text: `You are a ${req.params.arguments?.tone ?? "plain"} assistant from ${name}.` } }],
  }));
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [{ uri: "store://about", name: "about", mimeType: "text/plain" }],
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [{ uriTemplate: "store://item/{id}", name: "item" }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (req) => ({
    contents: [{ uri: req.params.uri, mimeType: "text/plain", text: `${name} resource ${req.params.uri}` }],
  }));
  return server;
}

async function main(): Promise<void> {
  const httpAt = process.argv.indexOf("--http");
  if (httpAt < 0) {
    await build().connect(new StdioServerTransport());
    return;
  }
  const port = Number(process.argv[httpAt + 1]);
  const http = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown) : undefined;
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      const server = build();
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch((err: unknown) => {
      res.statusCode = 500;
      res.end(String(err));
    });
  });
  http.listen(port, "127.0.0.1", () => process.stdout.write(`listening ${port}\n`));
}

void main();
