/**
 * Go dynamic instructions through `nanobot agent -m --config nanobot.yaml`: `${servers.X.instructions}`,
 * `${nanobot:time}`, env variables (and `env:` defaults), MCP-prompt instructions, top-level
 * `prompts` templates, `publish.introduction`'s sibling rules, and the errors when a reference
 * resolves to nothing or a required env variable is missing.
 */
import { describe, expect, it } from "vitest";
import { project, stdioServer, systemPromptOf, goConfigSuite } from "./helpers.js";
import type { Project } from "./helpers.js";

const fake = goConfigSuite();
let p: Project;

function goConfig(agent: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    llmProviders: { fake: { dialect: "OpenAIChatCompletions", baseURL: fake.openaiBaseURL, apiKey: "sk-go-config-0001" } },
    agents: { main: { model: "fake/test-model", mcpServers: ["store"], ...agent } },
    mcpServers: { store: stdioServer({ SERVER_NAME: "acme-store", SERVER_INSTRUCTIONS: "Always quote prices in euros." }) },
    ...extra,
  };
}

describe("dynamic instructions reach the model as text, not as ${…}", () => {
  it("expands ${servers.<name>.instructions}, ${nanobot:time} and env variables with env: defaults", async () => {
    p = await project();
    await p.write("nanobot.yaml", goConfig(
      { instructions: "${servers.store.instructions}\nShop: ${SHOP_NAME}. Clerk: ${CLERK}. Now: ${nanobot:time}." },
      { env: { SHOP_NAME: { default: "Acme" }, CLERK: { description: "who answers" } } },
    ));
    fake.enqueue({ text: "ok" });
    const before = Date.now();
    const r = await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"], { CLERK: "Ada", TZ: "UTC" });
    expect(r.err).not.toContain("error");
    expect(r).toMatchObject({ code: 0, out: "ok\n" });
    const system = systemPromptOf(fake.requests.at(-1)?.body);
    expect(system).toContain("Always quote prices in euros.\nShop: Acme. Clerk: Ada. Now: ");
    expect(system).not.toContain("${");
    const stamp = /Now: (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\./.exec(system)?.[1];
    expect(stamp).toBeDefined();
    expect(Math.abs(Date.parse(stamp!) - before)).toBeLessThan(10 * 60_000);
  });

  it("uses an MCP prompt's text as the system prompt, with ${…} in its args expanded", async () => {
    p = await project();
    await p.write("nanobot.yaml", goConfig({ instructions: { mcpServer: "store", prompt: "system", args: { tone: "${TONE}" } } }));
    fake.enqueue({ text: "ok" });
    const r = await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"], { TONE: "cheerful" });
    expect(r.code).toBe(0);
    expect(systemPromptOf(fake.requests.at(-1)?.body)).toContain("You are a cheerful assistant from acme-store.");
  });

  it("renders a top-level prompts template (a ${var} template no longer fails the config)", async () => {
    p = await project();
    await p.write("nanobot.yaml", goConfig(
      { instructions: { mcpServer: "persona", prompt: "persona", args: { topic: "kites" } } },
      { prompts: { persona: { description: "a persona", input: { topic: "what to talk about" }, template: "You only talk about ${topic}, at ${SHOP_NAME:-the shop}." } } },
    ));
    const check = await p.run(["config", "check", "--config", "nanobot.yaml"]);
    expect(check.code).toBe(0);
    fake.enqueue({ text: "ok" });
    const r = await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"]);
    expect(r.code).toBe(0);
    expect(systemPromptOf(fake.requests.at(-1)?.body)).toContain("You only talk about kites, at the shop.");
  });

  it("a reference that resolves to nothing fails the turn, naming it", async () => {
    p = await project();
    await p.write("nanobot.yaml", goConfig({ instructions: "Hello ${NOT_SET_ANYWHERE}" }));
    const requests = fake.requests.length;
    const r = await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"]);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain("${NOT_SET_ANYWHERE} is not set");
    expect(fake.requests.length).toBe(requests);
  });

  it("$${…} stays a literal ${…}", async () => {
    p = await project();
    await p.write("nanobot.yaml", goConfig({ instructions: "Write $${QUERY} literally." }));
    fake.enqueue({ text: "ok" });
    expect((await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"])).code).toBe(0);
    expect(systemPromptOf(fake.requests.at(-1)?.body)).toContain("Write ${QUERY} literally.");
  });
});

describe("env: required variables", () => {
  it("a missing required variable stops the command with exit 2, naming it; optional and defaulted ones do not", async () => {
    p = await project();
    await p.write("nanobot.yaml", goConfig(
      { instructions: "hi" },
      { env: { STORE_TOKEN: "the store's API token", TRACE: { optional: true }, REGION: { default: "eu" } } },
    ));
    const r = await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("required environment variable not set: STORE_TOKEN (the store's API token)");
    const check = await p.run(["config", "check", "--config", "nanobot.yaml"]);
    expect(check.code).toBe(2);
    expect(check.err).toContain("STORE_TOKEN");
    fake.enqueue({ text: "ok" });
    expect((await p.run(["agent", "-m", "hi", "--config", "nanobot.yaml"], { STORE_TOKEN: "t" })).code).toBe(0);
  });

  it("useBearerToken is named as unsupported instead of being dropped", async () => {
    p = await project();
    await p.write("nanobot.yaml", goConfig({ instructions: "hi" }, { env: { TOKEN: { optional: true, useBearerToken: true } } }));
    const check = await p.run(["config", "check", "--config", "nanobot.yaml"]);
    expect(check.code).toBe(0);
    expect(check.err).toContain("env.TOKEN.useBearerToken: not supported");
  });
});
