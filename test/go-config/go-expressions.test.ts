/**
 * Go `${…}` expressions that are not plain names, through `nanobot agent -m` and `config check`:
 * in instructions and prompt templates they are evaluated as JavaScript over Go's globals
 * (`servers.<name>.instructions`, a template's arguments), as Go does; a failing or undefined
 * one fails the turn naming it; Go's `call()` helper is named as unsupported; in other keys
 * (substituted at load) an expression stays literal and `config check` says so.
 */
import { describe, expect, it } from "vitest";
import { project, stdioServer, systemPromptOf, goConfigSuite } from "./helpers.js";
import type { Project } from "./helpers.js";

const fake = goConfigSuite();
let p: Project;

function goConfig(agent: Record<string, unknown>, extra: Record<string, unknown> = {}, serverEnv: Record<string, string> = {}): Record<string, unknown> {
  return {
    llmProviders: { fake: { dialect: "OpenAIChatCompletions", baseURL: fake.openaiBaseURL, apiKey: "sk-go-expr-0001" } },
    agents: { main: { model: "fake/test-model", mcpServers: ["store"], ...agent } },
    mcpServers: { store: stdioServer({ SERVER_NAME: "acme-store", SERVER_INSTRUCTIONS: "  Quote prices in euros.  ", ...serverEnv }) },
    ...extra,
  };
}

describe("${expression} in dynamic text is evaluated as Go evaluates it (JavaScript over its globals)", () => {
  it("instructions and a prompts template: method calls, arithmetic, objects as JSON", async () => {
    p = await project();
    await p.write(
      "nanobot.yaml",
      goConfig(
        { instructions: { mcpServer: "persona", prompt: "persona", args: { topic: "kites" } } },
        {
          prompts: {
            persona: {
              input: { topic: "what to talk about" },
              template: "[${servers.store.instructions.trim().toUpperCase()}] Topic: ${topic.toUpperCase()}. ${2 * 21} ${({a: 1})} ${Object.keys(servers).join(',')}",
            },
          },
        },
      ),
    );
    const check = await p.run(["config", "check", "--config", "nanobot.yaml"]);
    expect(check.code).toBe(0);
    expect(check.err).not.toContain("Go expression");
    fake.enqueue({ text: "ok" });
    const r = await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"]);
    expect(r).toMatchObject({ code: 0, out: "ok\n" });
    expect(systemPromptOf(fake.requests.at(-1)?.body)).toContain('[QUOTE PRICES IN EUROS.] Topic: KITES. 42 {"a":1} store');
  });

  it("an expression that fails or is undefined fails the turn naming it; call() is named as unsupported", async () => {
    p = await project();
    const before = fake.requests.length;
    await p.write("nanobot.yaml", goConfig({ instructions: "Hi ${servers.store.missing.field}" }));
    const r = await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"]);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain("agents.main.instructions: the expression ${servers.store.missing.field} failed");

    await p.write("nanobot.yaml", goConfig({ instructions: "Hi ${servers.store.nothing}" }));
    const undef = await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"]);
    expect(undef.err).toContain("the expression ${servers.store.nothing} is undefined");

    await p.write("nanobot.yaml", goConfig({ instructions: "${call('store/catalog', {})}" }));
    const call = await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"]);
    expect(call.err).toContain("call() (an MCP call from an expression) is not supported by nanobot (TS)");
    expect(fake.requests.length).toBe(before);
  });
});

describe("config check: an expression where nanobot substitutes only names", () => {
  it("warns, naming the key, that the expression stays literal", async () => {
    p = await project();
    await p.write("nanobot.yaml", goConfig({ instructions: "hi" }, {}, { REGION: "${['eu', 'west'].join('-')}" }));
    const check = await p.run(["config", "check", "--config", "nanobot.yaml"]);
    expect(check.code).toBe(0);
    expect(check.err).toContain("mcpServers.store.env.REGION: ${['eu', 'west'].join('-')} is a Go expression; nanobot (TS) evaluates expressions only in instructions");
    expect(check.err).toContain("stays literal text");
  });
});
