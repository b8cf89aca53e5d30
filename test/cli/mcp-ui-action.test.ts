/**
 * MCP-UI actions through `nanobot agent -m` with a Go `nanobot.yaml` (bare MCP tool names) and
 * the stdio shop server (test/mcp/servers/mcp-ui-server.ts): a tool action runs the tool with
 * no model call, then (as in Go) the model comments on the result; an action for a tool the
 * agent is not offered is the engine's unknown-tool error, not a way around the agent's tool
 * list; a prompt action sends the MCP prompt's text to the model.
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
  it("a tool action runs the tool by its Go name without a model call; then the model comments on its result, as in Go", async () => {
    p = await project();
    await p.write("nanobot.yaml", config({ mcpServers: ["shop"] }));
    const before = fake.requests.length;
    fake.enqueue({ text: "Your cart now holds a kiwi." });
    const act = action("tool", { toolName: "add_item", params: { item: "kiwi" } });
    const r = await p.run(["agent", "-m", act, "--config", "nanobot.yaml"]);
    expect(r.err).toBe("");
    expect(r).toMatchObject({ code: 0, out: "Your cart now holds a kiwi.\n" });
    // One model request: after the tool ran, with the action, the call and its result.
    expect(fake.requests.length).toBe(before + 1);
    const messages = (fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown; tool_calls?: Array<{ function: { name: string; arguments: string } }> }> }).messages;
    expect(messages.slice(-3).map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(messages.at(-3)?.content).toBe(act);
    expect(messages.at(-2)?.tool_calls?.[0]?.function).toEqual({ name: "add_item", arguments: JSON.stringify({ item: "kiwi" }) });
    expect(JSON.stringify(messages.at(-1)?.content)).toContain("Added kiwi; the cart has 1 item(s): kiwi.");
  });

  it("a tool action cannot reach a tool the agent is not offered", async () => {
    p = await project();
    await p.write("nanobot.yaml", config({ tools: ["shop/show_cart"] }));
    fake.enqueue({ text: "I cannot add items here." });
    const r = await p.run(["agent", "-m", action("tool", { toolName: "add_item", params: { item: "kiwi" } }), "--config", "nanobot.yaml"]);
    expect(r.out).toBe("I cannot add items here.\n");
    // The model reads the unknown-tool error; the tool never ran.
    const sent = JSON.stringify((fake.requests.at(-1)?.body as { messages: unknown[] }).messages.at(-1));
    expect(sent).toContain("Tool 'add_item' not found. Available tools: show_cart.");
    expect(sent).not.toContain("Added kiwi");
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

  it("a prompt action finds a prompt through the agent's prompts list (server/prompt:alias), as Go does", async () => {
    p = await project();
    await p.write("nanobot.yaml", config({ tools: ["read_file"], prompts: ["shop/recipe:dessert"], resources: ["shop"] }));
    const check = await p.run(["config", "check", "--config", "nanobot.yaml"]);
    expect(check.err).toContain("agents.shopper: resources: Go lists them to its own web UI's agent session");
    fake.enqueue({ text: "Fig pudding." });
    const r = await p.run(["agent", "-m", action("prompt", { promptName: "dessert", params: { fruit: "figs" } }), "--config", "nanobot.yaml"]);
    expect(r).toMatchObject({ code: 0, out: "Fig pudding.\n" });
    const messages = (fake.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    expect(messages.filter((m) => m.role === "user").at(-1)?.content).toBe("Write a short recipe that uses figs.");
    // Without the prompts entry the agent has no such prompt.
    await p.write("nanobot.yaml", config({ tools: ["read_file"] }));
    const missing = await p.run(["agent", "-m", action("prompt", { promptName: "dessert", params: { fruit: "figs" } }), "--config", "nanobot.yaml"]);
    expect(missing.code).not.toBe(0);
    expect(missing.out + missing.err).toContain('prompt "dessert" not found');
  });
});
