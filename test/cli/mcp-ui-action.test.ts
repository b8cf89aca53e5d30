/**
 * MCP-UI actions through `nanobot agent -m` with a Go `nanobot.yaml` (bare MCP tool names) and
 * the stdio shop server (test/mcp/servers/mcp-ui-server.ts): a tool action prints the tool's
 * result with no model request; an action for a tool the agent is not offered is the engine's
 * unknown-tool error, not a way around the agent's tool list; a prompt action sends the MCP
 * prompt's text to the model.
 */
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { REPO, project } from "../go-config/helpers.js";
import type { Project } from "../go-config/helpers.js";

let fake: FakeLLM;
let p: Project | undefined;

beforeAll(async () => {
  fake = await startFakeLLM();
});
afterAll(async () => {
  await fake.close();
});
afterEach(async () => {
  await p?.cleanup();
  p = undefined;
});

function config(agent: Record<string, unknown>): Record<string, unknown> {
  return {
    llmProviders: { fake: { dialect: "OpenAIChatCompletions", baseURL: fake.openaiBaseURL, apiKey: "sk-mcp-ui-0001" } },
    agents: { shopper: { model: "fake/test-model", ...agent } },
    mcpServers: { shop: { command: process.execPath, args: ["--import", "tsx", path.join(REPO, "test/mcp/servers/mcp-ui-server.ts")], cwd: REPO } },
  };
}

const action = (type: string, payload: Record<string, unknown>): string => JSON.stringify({ type, payload });

describe("MCP-UI actions through nanobot agent -m", () => {
  it("a tool action runs the tool by its Go name and prints the result, with no model request", async () => {
    p = await project();
    await p.write("nanobot.yaml", config({ mcpServers: ["shop"] }));
    const before = fake.requests.length;
    const r = await p.run(["agent", "-m", action("tool", { toolName: "add_item", params: { item: "kiwi" } }), "--config", "nanobot.yaml"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toContain("Added kiwi; the cart has 1 item(s): kiwi.");
    expect(fake.requests.length).toBe(before);
  });

  it("a tool action cannot reach a tool the agent is not offered", async () => {
    p = await project();
    await p.write("nanobot.yaml", config({ tools: ["shop/show_cart"] }));
    const before = fake.requests.length;
    const r = await p.run(["agent", "-m", action("tool", { toolName: "add_item", params: { item: "kiwi" } }), "--config", "nanobot.yaml"]);
    expect(r.out).not.toContain("Added kiwi");
    expect(r.out).toContain("Tool 'add_item' not found. Available tools: show_cart.");
    expect(fake.requests.length).toBe(before);
  });

  it("a prompt action sends the agent's MCP prompt, expanded, to the model", async () => {
    p = await project();
    await p.write("nanobot.yaml", config({ mcpServers: ["shop"] }));
    fake.enqueue({ text: "Kiwi sorbet." });
    const r = await p.run(["agent", "-m", action("prompt", { promptName: "recipe", params: { fruit: "kiwis" } }), "--config", "nanobot.yaml"]);
    expect(r.code).toBe(0);
    expect(r.out).toContain("Kiwi sorbet.");
    const messages = (fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    expect(messages.filter((m) => m.role === "user").at(-1)?.content).toBe("Write a short recipe that uses kiwis.");
  });
});
