/**
 * `/mcp list|connect|disconnect` through the assembled gateway's OpenAI API: a disconnected
 * server's tools leave the next request to the model, and come back after connect.
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { resolveConfig } from "../../src/config/index.js";
import { startAssistantGateway } from "../../src/gateway/assistant-gateway.js";
import type { RunningAssistant } from "../../src/gateway/assistant-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { testServerSpec } from "../mcp/helpers.js";

let root: string;
let fake: FakeLLM;
let assistant: RunningAssistant;
let client: OpenAI;
let restart: () => Promise<void>;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-mcp-cmd-"));
  const home = join(root, "home");
  const workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  fake = await startFakeLLM();
  const env = { HOME: root, NANOBOT_HOME: home, PATH: process.env.PATH ?? "" };
  const { config } = resolveConfig(
    {
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-mcp-cmd-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace } },
      mcpServers: { probe: testServerSpec(), broken: { command: process.execPath, args: ["-e", "process.exit(3)"] } },
    },
    { env, cwd: root, envProviders: false },
  );
  const start = async (): Promise<void> => {
    assistant = await startAssistantGateway(new Runtime({ config, home, env }), { port: 0 });
    client = new OpenAI({ baseURL: `${assistant.gateway.server.url}/v1`, apiKey: "unused", maxRetries: 0 });
  };
  restart = async () => {
    await assistant.close();
    await start();
  };
  await start();
});
afterEach(async () => {
  await assistant.close();
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

async function say(content: string): Promise<string> {
  const reply = await client.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content }], user: "mcp-cmd" });
  return reply.choices[0]?.message.content ?? "";
}

function toolNames(index: number): string[] {
  const tools = (fake.requests[index]?.body as { tools?: Array<{ function: { name: string } }> }).tools ?? [];
  return tools.map((t) => t.function.name);
}

describe("/mcp", () => {
  it("lists, disconnects and reconnects a server; the model's tools follow", async () => {
    const list = await say("/mcp list");
    expect(list).toMatch(/- probe: connected, \d+ tools/);
    expect(list).toMatch(/- broken: failed to start/);

    expect(await say("/mcp disconnect probe")).toBe(
      "Disconnected probe; its tools are gone until /mcp connect probe. Until nanobot restarts; the config file is unchanged.",
    );
    expect(await say("/mcp")).toContain("- probe: disconnected (/mcp connect probe)");
    fake.enqueue({ text: "without probe" });
    expect(await say("hello")).toBe("without probe");
    expect(toolNames(0).some((n) => n.startsWith("mcp_probe_"))).toBe(false);

    expect(await say("/mcp connect probe")).toMatch(/^Connected probe \(\d+ tools\)\. Until nanobot restarts; the config file is unchanged\.$/);
    fake.enqueue({ text: "with probe" });
    expect(await say("hello again")).toBe("with probe");
    expect(toolNames(1)).toContain("mcp_probe_whoami");
    fake.assertDone();
  });

  it("is runtime only, as in the Python nanobot: a restart brings back what the config says", async () => {
    await say("/mcp disconnect probe");
    expect(await say("/mcp")).toContain("- probe: disconnected");
    await restart();
    expect(await say("/mcp")).toMatch(/- probe: connected, \d+ tools/);
  });

  it("answers clearly for a server not in the config, one that cannot start, and bad usage", async () => {
    expect(await say("/mcp connect nope")).toBe("No MCP server named nope in the config (configured: probe, broken).");
    expect(await say("/mcp connect broken")).toMatch(/^Could not connect broken: /);
    expect(await say("/mcp disconnect nope")).toBe("nope is not connected.");
    expect(await say("/mcp frobnicate")).toContain("Usage: /mcp");
    expect(fake.requests).toHaveLength(0);
  });
});
