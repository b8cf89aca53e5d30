/**
 * Publishing as the Go nanobot does, seen by an MCP SDK client: over stdio (`nanobot serve-mcp
 * --config nanobot.yaml`, the real CLI spawned) and over the gateway's `/mcp`. serverInfo from
 * `publish.name/version`, `instructions`, the experimental `ai.nanobot` intro (expanded like
 * instructions), the entrypoint agent only, `publish.tools` (with an alias), `publish.mcpServers`,
 * `publish.prompts` (a top-level template), `publish.resources`, and the chat resources.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { loadConfig } from "../../src/config/load.js";
import { startAssistantGateway } from "../../src/gateway/assistant-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { REPO, project, stdioServer } from "./helpers.js";
import type { Project } from "./helpers.js";

const tsxLoader = createRequire(import.meta.url).resolve("tsx");
const entry = path.join(REPO, "test/mcp-server/cli-entry.ts");

let fake: FakeLLM;
let p: Project;
let client: Client | undefined;

beforeAll(async () => {
  fake = await startFakeLLM();
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  await client?.close().catch(() => undefined);
  client = undefined;
  await p?.cleanup();
});

function publishConfig(): Record<string, unknown> {
  return {
    llmProviders: { fake: { dialect: "OpenAIChatCompletions", baseURL: fake.openaiBaseURL, apiKey: "sk-go-publish-0001" } },
    env: { SHOP: { default: "Acme" } },
    publish: {
      name: "Acme Shop",
      version: "3.1.4",
      instructions: "Ask the shopper about products.",
      introduction: "Welcome to ${SHOP}. ${servers.store.instructions}",
      entrypoint: ["shopper"],
      tools: ["store/catalog:search_catalog"],
      mcpServers: ["extra"],
      prompts: ["greeting"],
      resources: ["store"],
    },
    agents: {
      shopper: { model: "fake/test-model", instructions: "You help shoppers.", mcpServers: ["store"] },
      helper: { model: "fake/test-model", instructions: "Helps." },
    },
    mcpServers: {
      store: stdioServer({ SERVER_NAME: "store", SERVER_INSTRUCTIONS: "Prices are in euros." }),
      extra: stdioServer({ SERVER_NAME: "extra" }),
    },
    prompts: { greeting: { description: "Greets someone", input: { name: "who to greet" }, template: "Hello ${name}, welcome to ${SHOP}." } },
  };
}

/** The text of a tool result (callTool's type also admits the legacy `{toolResult}` shape). */
const text = (result: Record<string, unknown>): string =>
  ((result["content"] ?? []) as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("");

/** What both faces must publish for `publishConfig()`. */
async function expectGoPublish(c: Client): Promise<void> {
  expect(c.getServerVersion()).toMatchObject({ name: "Acme Shop", version: "3.1.4" });
  expect(c.getInstructions()).toBe("Ask the shopper about products.");
  expect(c.getServerCapabilities()?.experimental?.["ai.nanobot"]).toEqual({ intro: "Welcome to Acme. Prices are in euros." });

  const tools = (await c.listTools()).tools.map((t) => t.name);
  // The entrypoint agent only (not `helper`), the aliased store tool, everything of `extra`.
  expect(tools).toEqual(["chat-with-shopper", "catalog", "big", "big_skip", "medium", "search_catalog"]);
  expect(text(await c.callTool({ name: "search_catalog", arguments: { query: "kites" } }))).toBe("store catalog: kites");
  expect(text(await c.callTool({ name: "catalog", arguments: { query: "yo-yos" } }))).toBe("extra catalog: yo-yos");

  const prompts = (await c.listPrompts()).prompts.map((x) => x.name);
  expect(prompts).toEqual(["greeting", "system"]);
  const greeting = await c.getPrompt({ name: "greeting", arguments: { name: "Bo" } });
  expect(greeting.messages[0]?.content).toEqual({ type: "text", text: "Hello Bo, welcome to Acme." });
  const system = await c.getPrompt({ name: "system", arguments: { tone: "dry" } });
  expect(system.messages[0]?.content).toMatchObject({ text: "You are a dry assistant from extra." });

  const resources = (await c.listResources()).resources.map((r) => r.uri);
  expect(resources).toEqual(expect.arrayContaining(["chat://history", "chat://progress", "store://about"]));
  const about = await c.readResource({ uri: "store://about" });
  expect(about.contents[0]).toMatchObject({ text: "extra resource store://about" });
  const item = await c.readResource({ uri: "store://item/7" });
  expect(item.contents[0]).toMatchObject({ text: "extra resource store://item/7" });

  fake.enqueue({ text: "We have kites." });
  const reply = await c.callTool({ name: "chat-with-shopper", arguments: { prompt: "kites?" } });
  expect(text(reply)).toBe("We have kites.");
  const body = fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
  expect(JSON.stringify(body.messages[0])).toContain("You help shoppers.");
}

describe("publish as the Go nanobot", () => {
  it("over stdio: nanobot serve-mcp --config nanobot.yaml", async () => {
    p = await project();
    await p.write("nanobot.yaml", publishConfig());
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", tsxLoader, entry, "serve-mcp", "--config", "nanobot.yaml"],
      cwd: p.root,
      env: { HOME: p.root, NANOBOT_HOME: p.home, PATH: process.env.PATH ?? "", NO_COLOR: "1" },
      stderr: "pipe",
    });
    client = new Client({ name: "go-publish-test", version: "1.0.0" });
    await client.connect(transport);
    await expectGoPublish(client);
  }, 60_000);

  it("a single-server proxy (publish.mcpServers: [one], nothing else) answers as that server", async () => {
    p = await project();
    const file = await p.write("nanobot.yaml", {
      publish: { mcpServers: ["store"] },
      mcpServers: { store: stdioServer({ SERVER_NAME: "store", SERVER_INSTRUCTIONS: "Prices are in euros." }) },
    });
    const env = { HOME: p.root, NANOBOT_HOME: p.home, PATH: process.env.PATH ?? "" };
    const loaded = await loadConfig({ configPath: file, env, cwd: p.root });
    const runtime = new Runtime({ config: loaded.config, home: loaded.home, env });
    const assistant = await startAssistantGateway(runtime, { port: 0 });
    try {
      client = new Client({ name: "go-proxy-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${assistant.gateway.server.url}/mcp`)));
      expect(client.getServerVersion()).toMatchObject({ name: "store", version: "2.0.0" });
      expect(client.getInstructions()).toBe("Prices are in euros.");
      // No agent is published, only the server's own tools.
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["catalog", "big", "big_skip", "medium"]);
      expect(text(await client.callTool({ name: "catalog", arguments: { query: "mugs" } }))).toBe("store catalog: mugs");
    } finally {
      await client?.close().catch(() => undefined);
      client = undefined;
      await assistant.close();
    }
  });

  it("over the gateway's /mcp", async () => {
    p = await project();
    const file = await p.write("nanobot.yaml", publishConfig());
    const env = { HOME: p.root, NANOBOT_HOME: p.home, PATH: process.env.PATH ?? "" };
    const loaded = await loadConfig({ configPath: file, env, cwd: p.root });
    const runtime = new Runtime({ config: loaded.config, home: loaded.home, env });
    const assistant = await startAssistantGateway(runtime, { port: 0 });
    try {
      client = new Client({ name: "go-publish-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${assistant.gateway.server.url}/mcp`)));
      await expectGoPublish(client);
    } finally {
      await client?.close().catch(() => undefined);
      client = undefined;
      await assistant.close();
    }
  }, 60_000);
});

describe("publish.tools naming agents and aliases, as Go names them", () => {
  it("an agent in publish.tools is published as chat-with-<agent> (or its :alias); server tools keep their MCP names or alias", async () => {
    p = await project();
    const config = publishConfig();
    (config.publish as Record<string, unknown>).tools = ["store/catalog:search_catalog", "helper", "shopper/chat-with-shopper:ask_shopper", "store/medium"];
    const file = await p.write("nanobot.yaml", config);
    const env = { HOME: p.root, NANOBOT_HOME: p.home, PATH: process.env.PATH ?? "" };
    const loaded = await loadConfig({ configPath: file, env, cwd: p.root });
    const runtime = new Runtime({ config: loaded.config, home: loaded.home, env });
    const assistant = await startAssistantGateway(runtime, { port: 0 });
    try {
      client = new Client({ name: "go-publish-names", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${assistant.gateway.server.url}/mcp`)));
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(["chat-with-shopper", "chat-with-helper", "ask_shopper", "search_catalog", "medium"]));
      expect(names).not.toContain("helper");
      fake.enqueue({ text: "Helper here." });
      expect(text(await client.callTool({ name: "chat-with-helper", arguments: { prompt: "hi" } }))).toBe("Helper here.");
      expect(JSON.stringify((fake.requests.at(-1)?.body as { messages: unknown[] }).messages[0])).toContain("Helps.");
      fake.enqueue({ text: "Shopper here." });
      expect(text(await client.callTool({ name: "ask_shopper", arguments: { prompt: "hi" } }))).toBe("Shopper here.");
      expect(JSON.stringify((fake.requests.at(-1)?.body as { messages: unknown[] }).messages[0])).toContain("You help shoppers.");
    } finally {
      await client?.close().catch(() => undefined);
      client = undefined;
      await assistant.close();
    }
  }, 60_000);
});
