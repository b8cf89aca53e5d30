// A stdio MCP server whose tools ask the client a question (elicitation/create), for the
// `mcp.elicitation` policy tests. `sep1034_defaults` sends the form of the conformance
// scenario `elicitation-sep1034-client-defaults` (every field has a default, none required);
// `needs_name` sends a form with a required field that has no default. Each tool answers
// with the client's action and content as JSON.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { ElicitRequestFormParams } from "@modelcontextprotocol/sdk/types.js";

const server = new McpServer({ name: "elicit-defaults", version: "1.0.0" });

const FORMS: Record<string, ElicitRequestFormParams["requestedSchema"]> = {
  sep1034_defaults: {
    type: "object",
    properties: {
      name: { type: "string", description: "User name", default: "John Doe" },
      age: { type: "integer", description: "User age", default: 30 },
      score: { type: "number", description: "User score", default: 95.5 },
      status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
      verified: { type: "boolean", description: "Verification status", default: true },
    },
    required: [],
  },
  needs_name: {
    type: "object",
    properties: {
      name: { type: "string", description: "Your name" },
      color: { type: "string", default: "blue" },
    },
    required: ["name"],
  },
};

for (const [name, requestedSchema] of Object.entries(FORMS)) {
  server.registerTool(name, { description: `Asks the user a form (${name}).` }, async () => {
    const answer = await server.server.elicitInput({ message: "Please accept with defaults", requestedSchema });
    return { content: [{ type: "text", text: JSON.stringify({ action: answer.action, content: answer.content ?? null }) }] };
  });
}

await server.connect(new StdioServerTransport());
