/**
 * A stdio MCP server for the Go-nanobot hook tests: plain tools (`get_weather`, `delete_file`,
 * `lookup`, `shared`), a prompt (`greeting`) and hook tools that append each payload they get to `$RECORD_FILE`
 * (one JSON line `{tool, payload}`) and transform it. `$TOOLS` (comma-separated) limits the
 * plain tools listed, so two instances can share or not share names. `ask_model` asks the
 * client's model (sampling/createMessage), `log_note` sends a logging notification first. Run with `node --import tsx`.
 */
import { appendFileSync } from "node:fs";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, GetPromptRequestSchema, ListPromptsRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

type Payload = Record<string, unknown>;
const anyObject = { type: "object" as const, properties: {}, additionalProperties: true };
const cityArg = { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] };

const PLAIN = [
  { name: "get_weather", description: "Weather for a city", inputSchema: cityArg },
  { name: "delete_file", description: "Deletes a file", inputSchema: { type: "object" as const, properties: { path: { type: "string" } } } },
  { name: "lookup", description: "Looks something up", inputSchema: anyObject },
  { name: "shared", description: `A tool every instance has (${process.env.SERVER_ID ?? "?"})`, inputSchema: anyObject },
  { name: "ask_model", description: "Asks the client's model (sampling) and returns its answer", inputSchema: anyObject },
  { name: "log_note", description: "Sends a logging notification, then answers", inputSchema: anyObject },
];
const HOOKS = [
  "record",
  "config_deny_bash",
  "config_instructions",
  "config_add_lookup",
  "config_add_server",
  "config_later_lookup",
  "config_later_model",
  "config_later_restrict",
  "chain_a",
  "chain_b",
  "fail",
  "request_rewrite",
  "request_answer",
  "response_rewrite",
  "msg_reject",
  "msg_mutate",
  "msg_censor",
];

let configCalls = 0;
const only = process.env.TOOLS ? new Set(process.env.TOOLS.split(",")) : undefined;
const listed = [...PLAIN.filter((t) => !only || only.has(t.name)), ...HOOKS.map((name) => ({ name, description: `hook ${name}`, inputSchema: anyObject }))];

function record(tool: string, payload: unknown): void {
  if (process.env.RECORD_FILE) appendFileSync(process.env.RECORD_FILE, `${JSON.stringify({ tool, payload })}\n`);
}

const json = (value: Payload): CallToolResult => ({ content: [], structuredContent: value });
const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });

function agentOf(p: Payload): Payload {
  return (p.agent ?? {}) as Payload;
}

function lastUserText(request: Payload): { parts: Payload[] } | undefined {
  const messages = (request.messages ?? []) as Array<{ role: string; content: Payload[] }>;
  const user = [...messages].reverse().find((m) => m.role === "user");
  return user ? { parts: user.content } : undefined;
}

async function handle(name: string, args: Payload): Promise<CallToolResult> {
  if (HOOKS.includes(name)) record(name, args);
  switch (name) {
    case "get_weather":
      return text(`sunny in ${String(args.city)}`);
    case "delete_file":
      return text(`deleted ${String(args.path)}`);
    case "lookup":
      return text("found it");
    case "shared":
      return text(`shared from ${process.env.SERVER_ID ?? "?"}`);
    case "ask_model":
      try {
        const answer = await server.createMessage({ messages: [{ role: "user", content: { type: "text", text: "say hi" } }], maxTokens: 50 });
        return text(`the model said: ${answer.content.type === "text" ? answer.content.text : answer.content.type}`);
      } catch (err) {
        return text(`sampling failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    case "log_note":
      await server.sendLoggingMessage({ level: "info", data: "a note from the server" });
      return text("noted");
    case "record":
      // No structured content and no JSON text: the chain goes on with the same payload.
      return text("recorded");
    case "config_deny_bash":
      return json({ ...args, agent: { ...agentOf(args), permissions: { ...((agentOf(args).permissions as Payload) ?? {}), bash: "deny" } } });
    case "config_instructions":
      return json({ ...args, agent: { ...agentOf(args), instructions: `${String(agentOf(args).instructions ?? "")} HOOKED-INSTRUCTIONS` } });
    case "config_add_lookup": {
      const tools = (agentOf(args).tools as string[] | undefined) ?? [];
      return json({ ...args, agent: { ...agentOf(args), tools: [...tools, `${process.env.SERVER_NAME ?? "hooks"}/lookup`] } });
    }
    case "config_add_server": {
      const tools = (agentOf(args).tools as string[] | undefined) ?? [];
      return json({ ...args, mcpServers: { web: { url: process.env.ADD_SERVER_URL } }, agent: { ...agentOf(args), tools: [...tools, "web/echo"] } });
    }
    case "config_later_lookup": {
      // From its second call on (the turn's second round) the agent gains `lookup`.
      configCalls++;
      if (configCalls < 2) return text("no change yet");
      const tools = (agentOf(args).tools as string[] | undefined) ?? [];
      return json({ ...args, agent: { ...agentOf(args), tools: [...tools, `${process.env.SERVER_NAME ?? "hooks"}/lookup`] } });
    }
    case "config_later_model": {
      // From the turn's second round: another model and temperature, and a response hook.
      configCalls++;
      if (configCalls < 2) return text("no change yet");
      const agent = agentOf(args);
      const hooks = { ...((agent.hooks as Payload | undefined) ?? {}), response: ["hooks/response_rewrite"] };
      return json({ ...args, agent: { ...agent, model: "custom/other-model", temperature: 0.3, maxTokens: 777, hooks } });
    }
    case "config_later_restrict": {
      // From the turn's second round: `lookup` is gone from the tools and bash is denied.
      configCalls++;
      if (configCalls < 2) return text("no change yet");
      const agent = agentOf(args);
      const tools = ((agent.tools as string[] | undefined) ?? []).filter((t) => !t.endsWith("/lookup"));
      return json({ ...args, agent: { ...agent, tools, permissions: { bash: "deny" } } });
    }
    case "chain_a":
    case "chain_b": {
      const agent = agentOf(args);
      return json({ ...args, agent: { ...agent, description: `${String(agent.description ?? "")}${name === "chain_a" ? "A" : "B"}` } });
    }
    case "fail":
      return { content: [{ type: "text", text: "hook exploded" }], isError: true };
    case "request_rewrite": {
      const request = args.request as Payload;
      const user = lastUserText(request);
      if (user) for (const part of user.parts) if (part.type === "text") part.text = `${String(part.text)} [rewritten by hook]`;
      return json({ ...args, request });
    }
    case "request_answer":
      return json({ ...args, response: { content: "answered by the request hook" } });
    case "response_rewrite": {
      const response = args.response as { message: { content: Payload[] } };
      for (const part of response.message.content) if (part.type === "text") part.text = `rewritten: ${String(part.text)}`;
      return json({ ...args, response });
    }
    case "msg_reject":
      return json({ ...args, accept: false, reason: "deleting files is not allowed here" });
    case "msg_mutate": {
      const message = args.message as { params: { arguments: Payload } };
      message.params.arguments = { ...message.params.arguments, city: "Paris" };
      return json({ ...args, accept: true, mutated: true, message, reason: "city pinned to Paris" });
    }
    case "msg_censor": {
      // A response hook: the tool's answer is replaced.
      const message = args.message as { result: Payload };
      message.result = { ...message.result, content: [{ type: "text", text: "[censored by hook]" }] };
      return json({ ...args, accept: true, mutated: true, message, reason: "answer censored" });
    }
    default:
      return { content: [{ type: "text", text: `unknown tool ${name}` }], isError: true };
  }
}

const server = new Server({ name: "go-hooks-test-server", version: "1.0.0" }, { capabilities: { tools: {}, prompts: {}, logging: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [{ name: "greeting", description: "A greeting" }] }));
server.setRequestHandler(GetPromptRequestSchema, () => ({ messages: [{ role: "user", content: { type: "text", text: "hello from the prompt" } }] }));
server.setRequestHandler(CallToolRequestSchema, (req) => handle(req.params.name, (req.params.arguments ?? {}) as Payload));
await server.connect(new StdioServerTransport());
process.stdin.once("end", () => process.exit(0));
