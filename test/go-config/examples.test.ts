/**
 * The Go nanobot's example configs (test/go-config/fixtures, URLs pointed at loopback stand-ins
 * of their MCP servers) load and behave as the Go nanobot documents, through the real CLI
 * (`nanobot agent -m --config …`) and, for the research bot, over MCP like `nanobot run` serves it.
 */
import { cp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { loadConfig } from "../../src/config/load.js";
import { startAssistantGateway } from "../../src/gateway/assistant-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { REPO, httpServer, project, systemPromptOf } from "./helpers.js";
import type { HttpStandIn, Project } from "./helpers.js";

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");

let fake: FakeLLM;
let p: Project;
let standIn: HttpStandIn | undefined;

beforeAll(async () => {
  fake = await startFakeLLM();
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  await standIn?.stop();
  standIn = undefined;
  await p?.cleanup();
});

/** Copies a fixture into the project, filling {{PORT}}, {{NODE}} and {{REPO}}. */
async function install(example: string, port = 0): Promise<string> {
  const dest = path.join(p.root, example);
  await cp(path.join(FIXTURES, example), dest, { recursive: true });
  const fill = async (dir: string): Promise<void> => {
    for (const name of await readdir(dir)) {
      const file = path.join(dir, name);
      if ((await stat(file)).isDirectory()) await fill(file);
      else {
        const text = await readFile(file, "utf8");
        await writeFile(file, text.replaceAll("{{PORT}}", String(port)).replaceAll("{{NODE}}", process.execPath).replaceAll("{{REPO}}", REPO));
      }
    }
  };
  await fill(dest);
  return dest;
}

type Body = { model: string; messages: Array<{ role: string; content: unknown }>; tools?: Array<{ function?: { name: string }; name?: string }>; temperature?: number };
const toolNames = (body: Body): string[] => (body.tools ?? []).map((t) => t.function?.name ?? t.name ?? "");

/** Go examples name bare models: OpenAI and Anthropic come from the environment, here the fake. */
const providerEnv = (): Record<string, string> => ({
  OPENAI_API_KEY: "sk-go-examples-openai-0001",
  OPENAI_BASE_URL: fake.openaiBaseURL,
  ANTHROPIC_API_KEY: "sk-ant-go-examples-0001",
  ANTHROPIC_BASE_URL: fake.anthropicBaseURL,
});

describe("huggingface.yaml", () => {
  it("the agent's system prompt is the Hugging Face server's instructions; its tools are offered and called", async () => {
    standIn = await httpServer({ SERVER_NAME: "huggingface", SERVER_INSTRUCTIONS: "You can search Hugging Face models, datasets and Spaces." });
    p = await project(providerEnv());
    const dir = await install("huggingface", Number(new URL(standIn.url).port));
    fake.enqueue({ toolCalls: [{ id: "c1", name: "catalog", arguments: { query: "whisper" } }] }, { text: "openai/whisper-large-v3" });
    const r = await p.run(["agent", "-m", "find a speech model", "--config", path.join(dir, "nanobot.yaml")]);
    expect(r.err).not.toContain("error");
    expect(r).toMatchObject({ code: 0, out: "openai/whisper-large-v3\n" });
    const [first, second] = fake.requests.slice(-2).map((q) => q.body as Body);
    expect(first!.model).toBe("gpt-4.1");
    expect(systemPromptOf(first)).toContain("You can search Hugging Face models, datasets and Spaces.");
    expect(systemPromptOf(first)).not.toContain("${servers");
    expect(toolNames(first!)).toContain("catalog");
    expect(JSON.stringify(second!.messages.at(-1))).toContain("huggingface catalog: whisper");
  });
});

describe("huggingface.yaml through the built CLI (bin/nanobot.js)", () => {
  it("nanobot agent -m --config huggingface/nanobot.yaml answers with the server's instructions as the system prompt", async () => {
    standIn = await httpServer({ SERVER_NAME: "huggingface", SERVER_INSTRUCTIONS: "Hub tools: search models." });
    p = await project();
    const dir = await install("huggingface", Number(new URL(standIn.url).port));
    fake.enqueue({ text: "spawned ok" });
    const { execFile } = await import("node:child_process");
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [path.join(REPO, "bin/nanobot.js"), "agent", "-m", "hi", "--config", path.join(dir, "nanobot.yaml")],
        { cwd: p.root, env: { HOME: p.root, NANOBOT_HOME: p.home, PATH: process.env.PATH ?? "", NO_COLOR: "1", ...providerEnv() } },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(out).toMatchObject({ code: 0, stdout: "spawned ok\n" });
    expect(systemPromptOf(fake.requests.at(-1)?.body)).toContain("Hub tools: search models.");
  });
});

describe("shopping.yaml and blackjack.yaml", () => {
  it("shopping: a Claude model over the Anthropic API with the store's tools", async () => {
    standIn = await httpServer({ SERVER_NAME: "store" });
    p = await project(providerEnv());
    const dir = await install("shopping", Number(new URL(standIn.url).port));
    fake.enqueue({ text: "We sell counters." });
    const r = await p.run(["agent", "-m", "what do you sell?", "--config", path.join(dir, "nanobot.yaml")]);
    expect(r).toMatchObject({ code: 0, out: "We sell counters.\n" });
    const q = fake.requests.at(-1)!;
    expect(q.path).toBe("/v1/messages");
    const body = q.body as Body & { system?: unknown };
    expect(body.model).toBe("claude-3-7-sonnet-latest");
    expect(JSON.stringify(body.system)).toContain("You are a helpful assistant for the shopify.supply store.");
    expect(toolNames(body)).toContain("catalog");
  });

  it("blackjack: the dealer answers; its display fields are named, not silently dropped", async () => {
    standIn = await httpServer({ SERVER_NAME: "blackjackmcp" });
    p = await project(providerEnv());
    const dir = await install("blackjack", Number(new URL(standIn.url).port));
    fake.enqueue({ text: "Welcome to the table." });
    const r = await p.run(["agent", "-m", "Let's play a game of blackjack!", "--config", path.join(dir, "nanobot.yaml")]);
    expect(r).toMatchObject({ code: 0, out: "Welcome to the table.\n" });
    expect(r.err).toContain("agents.dealer: icon, iconDark: display fields of the Go web UI");
    expect(systemPromptOf(fake.requests.at(-1)?.body)).toContain("HitBot-3000");
  });
});

describe("directory-config (agents/*.md + mcpServers.yaml)", () => {
  it("loads both agents with the servers file's MCP servers; Go's default rule picks the first by name", async () => {
    standIn = await httpServer({ SERVER_NAME: "store" });
    p = await project(providerEnv());
    const dir = await install("directory-config", Number(new URL(standIn.url).port));
    const check = await p.run(["config", "check", "--config", dir]);
    expect(check.code).toBe(0);
    // The helper's front-matter `id` is ignored as in Go, and said so; the README is no agent.
    expect(check.err).toContain('agents/helper.md: id "product-search" is ignored');
    expect(check.err).not.toContain("README");

    // No `default: true`: Go makes the lexicographically first published agent the default.
    fake.enqueue({ text: "from helper" });
    const r = await p.run(["agent", "-m", "find mugs", "--config", dir]);
    expect(r).toMatchObject({ code: 0, out: "from helper\n" });
    const helperBody = fake.requests.at(-1)!.body as Body;
    expect(helperBody.model).toBe("gpt-4");
    expect(systemPromptOf(helperBody)).toContain("You are a specialized product search assistant.");
    expect(toolNames(helperBody)).toContain("catalog");

    fake.enqueue({ text: "from main" });
    const m = await p.run(["agent", "-m", "hello", "-a", "main", "--config", dir]);
    expect(m).toMatchObject({ code: 0, out: "from main\n" });
    const mainReq = fake.requests.at(-1)!;
    expect(mainReq.path).toBe("/v1/messages");
    const mainBody = mainReq.body as Body & { system?: unknown };
    expect(mainBody).toMatchObject({ model: "claude-3-7-sonnet-latest", temperature: 0.7 });
    expect(JSON.stringify(mainBody.system)).toContain("You are a helpful shopping assistant for the shopify.supply store.");
    expect(toolNames(mainBody)).toContain("catalog");
  });

  it("mode: subagent is not published and default: true leads; two defaults are refused", async () => {
    standIn = await httpServer({ SERVER_NAME: "store" });
    p = await project(providerEnv());
    const dir = await install("directory-config", Number(new URL(standIn.url).port));
    await p.write("directory-config/agents/main.md", (await readFile(path.join(dir, "agents/main.md"), "utf8")).replace("temperature: 0.7", "temperature: 0.7\ndefault: true"));
    await p.write("directory-config/agents/helper.md", (await readFile(path.join(dir, "agents/helper.md"), "utf8")).replace("id: product-search", "mode: subagent"));
    const env = { HOME: p.root, NANOBOT_HOME: p.home, ...providerEnv() };
    const { config } = await loadConfig({ configPath: dir, env, cwd: p.root });
    expect(config.publish.entrypoint).toEqual(["main"]);
    fake.enqueue({ text: "from main" });
    expect((await p.run(["agent", "-m", "hi", "--config", dir])).out).toBe("from main\n");

    await p.write("directory-config/agents/helper.md", "---\nmodel: gpt-4\ndefault: true\n---\nHelp.\n");
    const twice = await p.run(["config", "check", "--config", dir]);
    expect(twice.code).toBe(2);
    expect(twice.err).toContain("several agents are marked default: true (helper, main)");
  });
});

describe("research-bot (the older Go example: sampling by agent name)", () => {
  it("publishes manager/research with its introduction; the research tool samples planner, searchAgent and writer as those agents", async () => {
    p = await project({ ...providerEnv(), BRAVE_API_KEY: "brave-test-key" });
    const dir = await install("research-bot");
    const env = { HOME: p.root, NANOBOT_HOME: p.home, PATH: process.env.PATH ?? "", ...providerEnv(), BRAVE_API_KEY: "brave-test-key" };
    const loaded = await loadConfig({ configPath: path.join(dir, "nanobot.yaml"), env, cwd: p.root });
    const runtime = new Runtime({ config: loaded.config, home: loaded.home, env });
    const assistant = await startAssistantGateway(runtime, { port: 0 });
    const client = new Client({ name: "research-test", version: "1.0.0" });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(`${assistant.gateway.server.url}/mcp`)));
      const intro = (client.getServerCapabilities()?.experimental?.["ai.nanobot"] as { intro?: string } | undefined)?.intro;
      expect(intro).toContain("This is a research bot that can help you with research queries.");
      // Every agent is chat: false and the entrypoint is a tool: only `research` is published.
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["research"]);

      const plan = { searches: [{ reason: "basics", query: "kite history" }, { reason: "materials", query: "kite fabrics" }] };
      fake.enqueue({ text: JSON.stringify(plan) }, { text: "Kites are old." }, { text: "Ripstop nylon." }, { text: "# Kites\nA report." });
      const start = fake.requests.length;
      const result = await client.callTool({ name: "research", arguments: { prompt: "kites" } }, undefined, { timeout: 120_000 });
      expect((result.content as Array<{ text: string }>)[0]?.text).toBe("# Kites\nA report.");

      const [planner, search1, search2, writer] = fake.requests.slice(start).map((q) => q.body as Body & { response_format?: { json_schema?: { schema?: unknown } } });
      expect(planner!.model).toBe("gpt-4o");
      expect(systemPromptOf(planner)).toContain("Given a query, come up with a set of web searches");
      expect(planner!.response_format?.json_schema?.schema).toMatchObject({ required: ["searches"] });
      expect(systemPromptOf(search1)).toContain("Given a search term, you search the web");
      expect(JSON.stringify(search2!.messages)).toContain("kite fabrics");
      expect(writer!.model).toBe("o3-mini");
      expect(systemPromptOf(writer)).toContain("You are a senior researcher");
      expect(JSON.stringify(writer!.messages)).toContain("Ripstop nylon.");
    } finally {
      await client.close().catch(() => undefined);
      await assistant.close();
    }
  });
});
