/**
 * The Go nanobot's turn features through `nanobot agent -m` run as its own process, against
 * the scripted fake LLM and a real stdio MCP server (test/mcp/servers/go-hooks-server.ts):
 * config / request / response hooks as MCP tool calls, MCP message hooks, permissions, and the
 * tool names a Go-style config offers.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import { startEverythingHttp } from "../mcp/helpers.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const entry = join(repo, "src/cli/entry.ts");
const tsxLoader = pathToFileURL(join(repo, "node_modules/tsx/dist/loader.mjs")).href;
const hookServer = join(repo, "test/mcp/servers/go-hooks-server.ts");

let root: string;
let workspace: string;
let recordFile: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-go-turn-"));
  workspace = join(root, "ws");
  recordFile = join(root, "hooks.jsonl");
  await mkdir(workspace, { recursive: true });
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

function server(env: Record<string, string> = {}, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { command: process.execPath, args: ["--import", tsxLoader, hookServer], env: { RECORD_FILE: recordFile, ...env }, ...extra };
}

/** Writes a Go-style nanobot.yaml (JSON is YAML) with one agent `main` and the given servers. */
async function writeConfig(agent: Record<string, unknown>, mcpServers: Record<string, unknown> = { hooks: server() }): Promise<string> {
  const file = join(root, "nanobot.yaml");
  const config = {
    providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-go-turn-0001" } },
    agents: { defaults: { model: "custom/test-model", workspace }, main: { instructions: "You are the main agent.", ...agent } },
    mcpServers,
  };
  await writeFile(file, JSON.stringify(config, null, 2));
  return file;
}

/** Runs the CLI as a user would: `nanobot --config <file> agent -m TEXT --json --logs`. */
function nanobot(config: string, message: string): Promise<{ code: number | null; out: string; err: string }> {
  return cli(["--config", config, "agent", "-m", message, "--json", "--logs"]);
}

function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", tsxLoader, entry, ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: root, NANOBOT_HOME: join(root, "nb") },
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

function reply(r: { out: string; err: string }): { content: string; stopReason: string } {
  try {
    return JSON.parse(r.out) as { content: string; stopReason: string };
  } catch {
    throw new Error(`no JSON reply; stdout: ${r.out}\nstderr: ${r.err}`);
  }
}

interface ChatBody {
  messages: Array<{ role: string; content: unknown; tool_call_id?: string }>;
  tools?: Array<{ function: { name: string; description?: string } }>;
}
const body = (i: number): ChatBody => fake.requests[i]!.body as unknown as ChatBody;
const offered = (i: number): string[] => (body(i).tools ?? []).map((t) => t.function.name).sort();
const systemText = (i: number): string => JSON.stringify(body(i).messages[0]?.content);
const toolResult = (i: number): string => JSON.stringify(body(i).messages.find((m) => m.role === "tool")?.content);

async function recorded(): Promise<Array<{ tool: string; payload: Record<string, unknown> }>> {
  const text = await readFile(recordFile, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { tool: string; payload: Record<string, unknown> });
}

const TIMEOUT = 60_000;

describe("config hooks", () => {
  it(
    "replace the agent for the turn: new instructions, an added MCP tool; the hook gets {agent, sessionId}",
    async () => {
      const config = await writeConfig({ tools: ["read_file"], hooks: { config: ["hooks/record", "hooks/config_instructions", "hooks/config_add_lookup"] } });
      fake.enqueue({ text: "done" });
      const r = await nanobot(config, "hi");
      expect(reply(r).content).toBe("done");
      expect(systemText(0)).toContain("You are the main agent. HOOKED-INSTRUCTIONS");
      expect(offered(0)).toEqual(["lookup", "read_file"]);
      const first = (await recorded()).find((x) => x.tool === "record")!;
      expect(first.payload).toMatchObject({ agent: { instructions: "You are the main agent.", tools: ["read_file"] }, sessionId: "cli:direct" });
    },
    TIMEOUT,
  );

  it(
    "may add an MCP server by URL, whose tools the returned agent then uses",
    async () => {
      const web = await startEverythingHttp("streamableHttp");
      try {
        const url = `http://127.0.0.1:${web.port}/mcp`;
        const config = await writeConfig({ tools: ["read_file"], hooks: { config: ["hooks/config_add_server"] } }, { hooks: server({ ADD_SERVER_URL: url }) });
        fake.enqueue({ toolCalls: [{ id: "call_e", name: "echo", arguments: { message: "over http" } }] }, { text: "echoed" });
        const r = await nanobot(config, "echo please");
        expect(reply(r).content).toBe("echoed");
        expect(offered(0)).toEqual(["echo", "read_file"]);
        expect(toolResult(1)).toContain("Echo: over http");
      } finally {
        await web.stop();
      }
    },
    TIMEOUT,
  );

  it(
    "run again before every round, and a failing hook is a warning while the chain goes on in order",
    async () => {
      const config = await writeConfig({
        description: "d-",
        tools: ["read_file"],
        hooks: { config: ["hooks/chain_a", "hooks/fail", "hooks/chain_b", "hooks/record"] },
      });
      await writeFile(join(workspace, "a.txt"), "alpha\n");
      fake.enqueue({ toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "a.txt" } }] }, { text: "read it" });
      const r = await nanobot(config, "read a.txt");
      expect(reply(r)).toMatchObject({ content: "read it", stopReason: "completed" });
      const records = (await recorded()).filter((x) => x.tool === "record");
      // One config chain per model call; each hook got the previous one's output (A before B).
      expect(records).toHaveLength(2);
      expect((records[0]!.payload.agent as { description: string }).description).toBe("d-AB");
      expect(r.err).toContain("config hook hooks/fail failed: hook exploded");
    },
    TIMEOUT,
  );

  it(
    "a change a config hook makes before a later round takes effect in that round: the model is offered, and can call, the new tool",
    async () => {
      const config = await writeConfig({ tools: ["read_file"], hooks: { config: ["hooks/config_later_lookup"] } });
      await writeFile(join(workspace, "a.txt"), "alpha\n");
      fake.enqueue(
        { toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "a.txt" } }] },
        { toolCalls: [{ id: "call_2", name: "lookup", arguments: {} }] },
        { text: "all done" },
      );
      const r = await nanobot(config, "go");
      expect(reply(r).content).toBe("all done");
      expect(offered(0)).toEqual(["read_file"]);
      expect(offered(1)).toEqual(["lookup", "read_file"]);
      expect(JSON.stringify(body(2).messages.at(-1)?.content)).toContain("found it");
    },
    TIMEOUT,
  );

  it(
    "a tool a later round's config hook takes away (or denies) is refused to the model as not allowed, naming why, not as an unknown tool",
    async () => {
      const config = await writeConfig({ tools: ["exec", "hooks/lookup"], hooks: { config: ["hooks/config_later_restrict"] } });
      fake.enqueue(
        { toolCalls: [{ id: "call_1", name: "lookup", arguments: {} }] },
        {
          toolCalls: [
            { id: "call_2", name: "lookup", arguments: {} },
            { id: "call_3", name: "exec", arguments: { command: "echo pwned" } },
          ],
        },
        { text: "understood" },
      );
      const r = await nanobot(config, "go");
      expect(reply(r).content).toBe("understood");
      expect(offered(0)).toEqual(["exec", "lookup"]);
      expect(offered(1)).toEqual([]);
      const results = body(2).messages.filter((m) => m.role === "tool");
      const textOf = (id: string): string => JSON.stringify(results.find((m) => m.tool_call_id === id)?.content);
      expect(textOf("call_1")).toContain("found it");
      expect(textOf("call_2")).toContain("'lookup' is not allowed: the agent's config hook (hooks.config) removed it");
      expect(textOf("call_3")).toContain("the agent's permissions do not allow 'exec' (bash: deny)");
      for (const id of ["call_2", "call_3"]) expect(textOf(id)).not.toContain("not found");
      expect(textOf("call_3")).not.toContain("pwned");
    },
    TIMEOUT,
  );

  it(
    "feed the built-in nanobot.system/config, which maps the permissions they set to tools",
    async () => {
      const config = await writeConfig({ tools: ["read_file", "exec"], hooks: { config: ["hooks/config_deny_bash"] } });
      fake.enqueue({ text: "ok" });
      await nanobot(config, "hi");
      expect(offered(0)).toEqual(["read_file"]);
    },
    TIMEOUT,
  );
});

describe("request and response hooks", () => {
  it(
    "a request hook rewrites what the model is sent",
    async () => {
      const config = await writeConfig({ tools: ["read_file"], hooks: { request: ["hooks/request_rewrite"] } });
      fake.enqueue({ text: "ok" });
      await nanobot(config, "hello model");
      expect(JSON.stringify(body(0).messages.at(-1)?.content)).toContain("hello model [rewritten by hook]");
      const payload = (await recorded())[0]!.payload as { request: { messages: unknown[] } };
      expect(payload.request.messages.length).toBeGreaterThan(1);
    },
    TIMEOUT,
  );

  it(
    "a request hook that returns a response answers in place of the model (no model call)",
    async () => {
      const config = await writeConfig({ hooks: { request: ["hooks/request_answer"] } });
      const r = await nanobot(config, "hi");
      expect(reply(r).content).toBe("answered by the request hook");
      expect(fake.requests).toHaveLength(0);
    },
    TIMEOUT,
  );

  it(
    "a response hook rewrites the model's answer",
    async () => {
      const config = await writeConfig({ hooks: { response: ["hooks/response_rewrite"] } });
      fake.enqueue({ text: "hello" });
      const r = await nanobot(config, "hi");
      expect(reply(r).content).toBe("rewritten: hello");
      const payload = (await recorded())[0]!.payload as { request: unknown; response: { message: { role: string } } };
      expect(payload.request).toBeTruthy();
      expect(payload.response.message.role).toBe("assistant");
    },
    TIMEOUT,
  );
});

describe("MCP message hooks (mcpServers.<x>.hooks)", () => {
  it(
    "a hook that rejects a tools/call: the reason reaches the model as the tool's error, the tool does not run",
    async () => {
      const config = await writeConfig(
        { tools: ["tools"] },
        { tools: server({}, { hooks: { "tools/call?direction=request&name=delete_file": ["hooks/msg_reject"] } }), hooks: server() },
      );
      fake.enqueue({ toolCalls: [{ id: "call_del", name: "delete_file", arguments: { path: "x" } }] }, { text: "refused" });
      await nanobot(config, "delete x");
      expect(toolResult(1)).toContain("deleting files is not allowed here");
      expect(toolResult(1)).not.toContain("deleted x");
      const seen = (await recorded()).find((x) => x.tool === "msg_reject")!.payload as { accept: boolean; message: { method: string; params: unknown } };
      expect(seen).toMatchObject({ accept: true, message: { method: "tools/call", params: { name: "delete_file", arguments: { path: "x" } } } });
    },
    TIMEOUT,
  );

  it(
    "a hook that mutates a tools/call changes what the server gets; a call the key does not match is untouched",
    async () => {
      const config = await writeConfig(
        { tools: ["tools"] },
        { tools: server({}, { hooks: { "tools/call?name=get_weather&direction=request": ["hooks/msg_mutate"] } }), hooks: server() },
      );
      fake.enqueue(
        { toolCalls: [{ id: "call_w", name: "get_weather", arguments: { city: "Rome" } }, { id: "call_l", name: "lookup", arguments: {} }] },
        { text: "ok" },
      );
      const r = await nanobot(config, "weather?");
      const tools = body(1).messages.filter((m) => m.role === "tool").map((m) => JSON.stringify(m.content));
      expect(tools[0]).toContain("sunny in Paris");
      expect(tools[1]).toContain("found it");
      expect((await recorded()).filter((x) => x.tool === "msg_mutate")).toHaveLength(1);
      // The change is recorded (logged with its reason; `_meta` of the result carries it too).
      expect(r.err).toContain("MCP message hooks changed a tools/call");
      expect(r.err).toContain("city pinned to Paris");
    },
    TIMEOUT,
  );

  it(
    "a prompts/get hook that rejects: an MCP-UI prompt action fails with the reason, the prompt is not fetched",
    async () => {
      const config = await writeConfig(
        { tools: ["tools"] },
        { tools: server({ TOOLS: "lookup" }, { hooks: { "prompts/get?name=greeting": ["hooks/msg_reject"] } }), hooks: server() },
      );
      const r = await nanobot(config, JSON.stringify({ type: "prompt", payload: { promptName: "greeting" } }));
      expect(r.out + r.err).toContain("deleting files is not allowed here");
      expect(fake.requests).toHaveLength(0);
      const seen = (await recorded()).find((x) => x.tool === "msg_reject")!.payload as { message: { method: string; params: unknown } };
      expect(seen.message).toMatchObject({ method: "prompts/get", params: { name: "greeting" } });
    },
    TIMEOUT,
  );

  it(
    "a !mutate: hook that changes the message rejects it instead (Go's implicit rejection)",
    async () => {
      const config = await writeConfig(
        { tools: ["tools"] },
        { tools: server({}, { hooks: { "tools/call": ["!mutate:hooks/msg_mutate"] } }), hooks: server() },
      );
      fake.enqueue({ toolCalls: [{ id: "call_w", name: "get_weather", arguments: { city: "Rome" } }] }, { text: "ok" });
      await nanobot(config, "weather?");
      expect(toolResult(1)).toContain("mutation not allowed by hook configuration, implicit rejection");
      expect(toolResult(1)).not.toContain("sunny");
    },
    TIMEOUT,
  );
});

describe("permissions", () => {
  it(
    "bash: deny removes exec from what the model is offered and a call to it is refused as denied by the permissions",
    async () => {
      const config = await writeConfig({ permissions: { bash: "deny" } }, {});
      fake.enqueue({ toolCalls: [{ id: "call_x", name: "exec", arguments: { command: "echo pwned" } }] }, { text: "ok" });
      await nanobot(config, "run it");
      expect(offered(0)).not.toContain("exec");
      expect(offered(0)).toEqual(expect.arrayContaining(["read_file", "write_file", "edit_file", "list_dir", "grep", "find_files"]));
      // Refused as denied, not as an unknown tool: the model reads why.
      expect(toolResult(1)).toContain("Tool 'exec' is not available: the agent's permissions do not allow 'exec' (bash: deny)");
      expect(toolResult(1)).toContain("It is not offered to this agent");
      expect(toolResult(1)).not.toContain("not found");
      expect(toolResult(1)).not.toContain("pwned");
    },
    TIMEOUT,
  );

  it(
    "'*': deny offers nothing",
    async () => {
      const config = await writeConfig({ permissions: { "*": "deny" } }, {});
      fake.enqueue({ text: "ok" });
      await nanobot(config, "hi");
      expect(offered(0)).toEqual([]);
    },
    TIMEOUT,
  );

  it(
    "the last match wins: '*': deny then read: allow offers the read tools only",
    async () => {
      const config = await writeConfig({ permissions: { "*": "deny", read: "allow" } }, {});
      fake.enqueue({ text: "ok" });
      await nanobot(config, "hi");
      expect(offered(0)).toEqual(["list_dir", "read_file"]);
    },
    TIMEOUT,
  );
});

describe("tool references and names in a Go-style config", () => {
  it(
    "tools: [server] offers the server's tools by their bare MCP names",
    async () => {
      const config = await writeConfig({ tools: ["tools"] }, { tools: server({ TOOLS: "get_weather,lookup" }) });
      fake.enqueue({ toolCalls: [{ id: "call_w", name: "get_weather", arguments: { city: "Oslo" } }] }, { text: "ok" });
      await nanobot(config, "weather?");
      expect(offered(0)).toEqual(expect.arrayContaining(["get_weather", "lookup", "record"]));
      // Go offers a server's tools only: no prompt or resource tools either.
      expect(offered(0).filter((n) => n.startsWith("mcp_"))).toEqual([]);
      expect(toolResult(1)).toContain("sunny in Oslo");
    },
    TIMEOUT,
  );

  it(
    "a Python-style config (no named agents) keeps the mcp_<server>_<tool> names",
    async () => {
      const file = join(root, "config.json");
      await writeFile(
        file,
        JSON.stringify({
          providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-go-turn-0001" } },
          agents: { defaults: { model: "custom/test-model", workspace } },
          tools: { mcpServers: { tools: server({ TOOLS: "get_weather" }) } },
        }),
      );
      fake.enqueue({ toolCalls: [{ id: "call_w", name: "mcp_tools_get_weather", arguments: { city: "Bern" } }] }, { text: "ok" });
      await nanobot(file, "weather?");
      // ...and, unlike a Go-style config, its prompts as mcp_<server>_prompt_<name> tools.
      expect(offered(0)).toEqual(expect.arrayContaining(["mcp_tools_get_weather", "mcp_tools_prompt_greeting", "exec", "read_file"]));
      expect(offered(0)).not.toContain("get_weather");
      expect(toolResult(1)).toContain("sunny in Bern");
    },
    TIMEOUT,
  );

  it(
    "a name two servers share gets the server as prefix; the others stay bare",
    async () => {
      const config = await writeConfig(
        { tools: ["a/shared", "b/shared", "a/get_weather"] },
        { a: server({ TOOLS: "shared,get_weather", SERVER_ID: "a" }), b: server({ TOOLS: "shared", SERVER_ID: "b" }) },
      );
      fake.enqueue({ toolCalls: [{ id: "call_s", name: "b_shared", arguments: {} }] }, { text: "ok" });
      await nanobot(config, "hi");
      expect(offered(0)).toEqual(["a_shared", "b_shared", "get_weather"]);
      expect(toolResult(1)).toContain("shared from b");
    },
    TIMEOUT,
  );

  it(
    "server/tool:alias offers the tool under the alias and calls the real one",
    async () => {
      const config = await writeConfig({ tools: ["tools/get_weather:forecast"] }, { tools: server() });
      fake.enqueue({ toolCalls: [{ id: "call_f", name: "forecast", arguments: { city: "Lima" } }] }, { text: "ok" });
      await nanobot(config, "hi");
      expect(offered(0).filter((n) => !["read_file", "write_file", "edit_file", "list_dir", "grep", "find_files", "exec", "web_fetch", "web_search", "spawn", "create_goal", "complete_goal", "cron"].includes(n))).toEqual(["forecast"]);
      expect(toolResult(1)).toContain("sunny in Lima");
    },
    TIMEOUT,
  );

  it(
    "toolOverrides exposes only the tools it names (renamed, redescribed) and toolPrefix goes before them",
    async () => {
      const config = await writeConfig(
        { tools: ["tools"] },
        { tools: server({}, { toolPrefix: "wx_", toolOverrides: { get_weather: { name: "forecast", description: "Forecast for a city" } } }) },
      );
      fake.enqueue({ toolCalls: [{ id: "call_f", name: "wx_forecast", arguments: { city: "Kyiv" } }] }, { text: "ok" });
      await nanobot(config, "hi");
      const mcp = (body(0).tools ?? []).filter((t) => t.function.name.startsWith("wx_"));
      expect(mcp.map((t) => [t.function.name, t.function.description])).toEqual([["wx_forecast", "Forecast for a city"]]);
      expect(offered(0)).not.toContain("get_weather");
      expect(toolResult(1)).toContain("sunny in Kyiv");
    },
    TIMEOUT,
  );
});

describe("mcp list", () => {
  it(
    "shows a Go-style config's tools by the names a turn offers (toolPrefix applied, no mcp_ prefix)",
    async () => {
      const config = await writeConfig({}, { tools: server({ TOOLS: "get_weather" }, { toolPrefix: "wx_" }) });
      const r = await cli(["--config", config, "mcp", "list", "--json"]);
      const listed = JSON.parse(r.out) as Array<{ server: string; tools: Array<{ name: string; sourceTool?: string }> }>;
      const names = listed[0]!.tools.map((t) => t.name);
      expect(names).toContain("wx_get_weather");
      expect(names.filter((n) => n.startsWith("mcp_"))).toEqual([]);
    },
    TIMEOUT,
  );
});

describe("config check", () => {
  it(
    "names hooks that can never run: an unknown agent hook, a message hook for the handshake or a name that is no MCP method, a target on no server",
    async () => {
      const config = await writeConfig(
        { hooks: { confg: ["hooks/record"], request: ["nowhere/x"], config: ["nanobot.system/config"] } },
        {
          hooks: server(
            {},
            { hooks: { "tool/call": ["hooks/record"], initialize: ["hooks/record"], "resources/subscribe": ["hooks/record"], "tools/call?direction=request": ["hooks/msg_reject"] } },
          ),
        },
      );
      const r = await cli(["--config", config, "config", "check"]);
      const text = r.out + r.err;
      expect(text).toContain('agents.main.hooks."confg" is not a hook an agent runs');
      expect(text).toContain('agents.main.hooks."request" names "nowhere/x", but "nowhere" is not in mcpServers');
      expect(text).toContain('mcpServers.hooks.hooks."tool/call": "tool/call" is not an MCP method a client sends or receives; this hook never runs');
      expect(text).toContain('mcpServers.hooks.hooks."initialize": the MCP handshake (initialize, notifications/initialized) is not hooked');
      // Every other MCP method is hooked now, in both directions.
      expect(text).not.toMatch(/"resources\/subscribe": ("resources|the MCP handshake)/);
      expect(text).not.toMatch(/"tools\/call\?direction=request": ("tools|the MCP handshake)/);
      expect(text).not.toContain('names "nanobot.system/config"');
      expect(text).not.toContain('"nanobot.system/config" is not');
    },
    TIMEOUT,
  );
});
