/**
 * Defaults of a Go-style `nanobot.yaml` are the Go nanobot's, not the Python ones: a named agent
 * without `temperature` sends none (Go leaves it to the model), and one without `maxTokens`
 * sends what Go's adapter for the wire API sends (none on OpenAI Responses, 4096 on Chat
 * Completions, 64000 on Anthropic), through `nanobot agent -m` against the fake LLM. The Python
 * `config.json` keeps its 0.1 and 8192.
 */
import { describe, expect, it } from "vitest";
import { goConfigSuite, project } from "./helpers.js";
import type { Project } from "./helpers.js";

const fake = goConfigSuite();
let p: Project;

type Body = Record<string, unknown>;
const lastBody = (): Body => fake.requests.at(-1)?.body as Body;

function goConfig(agent: Record<string, unknown>, extra: Record<string, unknown> = {}, dialect = "OpenAIChatCompletions"): Record<string, unknown> {
  const baseURL = dialect === "AnthropicMessages" ? fake.anthropicBaseURL : fake.openaiBaseURL;
  return {
    llmProviders: { fake: { dialect, baseURL, apiKey: "sk-go-defaults-0001" } },
    agents: { main: { model: "fake/test-model", ...agent } },
    ...extra,
  };
}

async function ask(file: string, content: Record<string, unknown>): Promise<Body> {
  await p.write(file, file.endsWith(".json") ? JSON.stringify(content) : content);
  fake.enqueue({ text: "ok" });
  const r = await p.run(["agent", "-m", "hi", "--config", file]);
  expect({ ...r, err: r.code === 0 ? "" : r.err }).toMatchObject({ code: 0, out: "ok\n", err: "" });
  return lastBody();
}

describe("temperature", () => {
  it("a Go agent without temperature sends none, as the Go nanobot", async () => {
    p = await project();
    expect(await ask("nanobot.yaml", goConfig({}))).not.toHaveProperty("temperature");
  });

  it("a Go agent's own temperature is sent", async () => {
    p = await project();
    expect(await ask("nanobot.yaml", goConfig({ temperature: 0.7 }))).toMatchObject({ temperature: 0.7 });
  });

  it("agents.defaults.temperature written in the file applies to the Go agent too", async () => {
    p = await project();
    expect(await ask("nanobot.yaml", goConfig({}, { agents: { main: { model: "fake/test-model" }, defaults: { temperature: 0.3 } } }))).toMatchObject({ temperature: 0.3 });
  });

  it("a Python config.json keeps the Python default 0.1", async () => {
    p = await project();
    const body = await ask("config.json", {
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-go-defaults-0002" } },
      agents: { defaults: { model: "custom/test-model" } },
    });
    expect(body).toMatchObject({ temperature: 0.1 });
  });
});

describe("max tokens", () => {
  const limitOf = (body: Body): unknown => body["max_output_tokens"] ?? body["max_completion_tokens"] ?? body["max_tokens"];

  it("a Go agent without maxTokens sends Go's adapter default: none on Responses, 4096 on Chat Completions, 64000 on Anthropic", async () => {
    p = await project();
    const responses = await ask("nanobot.yaml", goConfig({}, {}, "OpenAIResponses"));
    expect(responses["input"]).toBeDefined();
    expect(limitOf(responses)).toBeUndefined();
    expect(limitOf(await ask("nanobot.yaml", goConfig({}, {}, "OpenAIChatCompletions")))).toBe(4096);
    const anthropic = await ask("nanobot.yaml", goConfig({}, {}, "AnthropicMessages"));
    expect(anthropic).toMatchObject({ max_tokens: 64_000 });
  });

  it("a Go agent's own maxTokens is sent, on every API", async () => {
    p = await project();
    for (const dialect of ["OpenAIResponses", "OpenAIChatCompletions", "AnthropicMessages"]) {
      expect(limitOf(await ask("nanobot.yaml", goConfig({ maxTokens: 1500 }, {}, dialect))), dialect).toBe(1500);
    }
  });

  it("agents.defaults.maxTokens written in the file applies to the Go agent too", async () => {
    p = await project();
    const body = await ask("nanobot.yaml", goConfig({}, { agents: { main: { model: "fake/test-model" }, defaults: { maxTokens: 2048 } } }, "OpenAIResponses"));
    expect(limitOf(body)).toBe(2048);
  });

  it("a Python config.json keeps the Python default 8192", async () => {
    p = await project();
    const body = await ask("config.json", {
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-go-defaults-0003" } },
      agents: { defaults: { model: "custom/test-model" } },
    });
    expect(limitOf(body)).toBe(8192);
  });
});

describe("Go keys nanobot does not act on", () => {
  it("config check names each with its reason instead of calling it unknown", async () => {
    p = await project();
    await p.write("nanobot.yaml", {
      ...goConfig({}),
      extends: ["base.yaml"],
      profiles: { dev: { agents: {} } },
      auth: { oauthClientID: "x" },
      workspaceId: "w1",
      mcpServers: { box: { command: "echo", image: "ghcr.io/example/box", sandboxed: true, workdir: "/w", ports: ["8080"] }, plain: { command: "echo", sandboxed: false } },
    });
    const r = await p.run(["config", "check", "--config", "nanobot.yaml"]);
    expect(r.code).toBe(0);
    expect(r.err).not.toContain("unknown key");
    for (const key of ["extends", "profiles", "auth", "workspaceId", "mcpServers.box.image", "mcpServers.box.sandboxed", "mcpServers.box.workdir", "mcpServers.box.ports"]) {
      expect(r.err).toMatch(new RegExp(`nanobot\\.yaml: ${key.replaceAll(".", "\\.")}: not supported by nanobot \\(TS\\): \\S`));
    }
    expect(r.err).toContain("set cwd for the server's working directory");
    expect(r.err).not.toContain("mcpServers.plain");
  });
});
