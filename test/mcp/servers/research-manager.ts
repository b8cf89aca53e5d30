/**
 * Stand-in for the Go research bot's `manager` server: one `research` tool that asks the host
 * to sample three of its agents by name hint — `planner` for a list of searches (JSON),
 * `searchAgent` once per search, `writer` for the report — and returns the report. Written for
 * the tests after the example's description; run with `node --import tsx`.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, CreateMessageResultSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "Research Bot", version: "1.0.0" }, { capabilities: { tools: {} } });

async function sample(agent: string, prompt: string): Promise<string> {
  const result = await server.request(
    {
      method: "sampling/createMessage",
      params: { messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 1_000_000, modelPreferences: { hints: [{ name: agent }] } },
    },
    CreateMessageResultSchema,
  );
  if (result.content.type !== "text") throw new Error(`no text from ${agent}`);
  return result.content.text;
}

server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [{ name: "research", description: "Researches a topic and writes a report", inputSchema: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] } }],
}));
server.setRequestHandler(CallToolRequestSchema, async (req) => {
  const prompt = String(req.params.arguments?.prompt ?? "");
  const plan = JSON.parse(await sample("planner", `Query: ${prompt}`)) as { searches: Array<{ reason: string; query: string }> };
  const summaries: string[] = [];
  for (const search of plan.searches) summaries.push(await sample("searchAgent", `Search term: ${search.query}\nReason for searching: ${search.reason}`));
  const report = await sample("writer", `Original query: ${prompt}\nSummarized search results: ${JSON.stringify(summaries)}`);
  return { content: [{ type: "text", text: report }] };
});

await server.connect(new StdioServerTransport());
