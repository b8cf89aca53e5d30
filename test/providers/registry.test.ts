import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/core/errors.js";
import { PROVIDER_CATALOG } from "../../src/providers/provider-catalog.js";
import { createProviderRegistry } from "../../src/providers/registry.js";
import { wireApiFromDialect } from "../../src/providers/settings.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { ask, collect } from "./helpers.js";

const env = {
  OPENAI_API_KEY: "sk-o",
  ANTHROPIC_API_KEY: "sk-a",
  DEEPSEEK_API_KEY: "sk-d",
  GEMINI_API_KEY: "g",
  MOONSHOT_API_KEY: "m",
  DASHSCOPE_API_KEY: "q",
  ZHIPUAI_API_KEY: "z",
  XAI_API_KEY: "x",
  MISTRAL_API_KEY: "mi",
  OPENROUTER_API_KEY: "or",
};

describe("the catalogue", () => {
  it("names at least 15 providers with an API, and a key variable for every hosted one", () => {
    expect(PROVIDER_CATALOG.length).toBeGreaterThanOrEqual(15);
    for (const name of ["openai", "anthropic", "openrouter", "deepseek", "groq", "gemini", "mistral", "moonshot", "dashscope", "zhipu", "siliconflow", "ollama", "vllm", "lm_studio", "custom", "xai", "together"]) {
      expect(PROVIDER_CATALOG.map((p) => p.name)).toContain(name);
    }
    for (const p of PROVIDER_CATALOG) if (!p.local) expect(p.apiKeyEnv).toMatch(/^[A-Z_]+$/);
  });
});

describe("model reference routing", () => {
  const registry = createProviderRegistry({ env });
  it.each([
    ["anthropic/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5", "anthropic", "https://api.anthropic.com"],
    ["claude-opus-4", "anthropic", "claude-opus-4", "anthropic", "https://api.anthropic.com"],
    ["gpt-4o", "openai", "gpt-4o", "chat", "https://api.openai.com/v1"],
    ["o3-mini", "openai", "o3-mini", "chat", "https://api.openai.com/v1"],
    ["deepseek-chat", "deepseek", "deepseek-chat", "chat", "https://api.deepseek.com/v1"],
    ["gemini-2.5-pro", "gemini", "gemini-2.5-pro", "chat", "https://generativelanguage.googleapis.com/v1beta/openai"],
    ["kimi-k2", "moonshot", "kimi-k2", "chat", "https://api.moonshot.ai/v1"],
    ["qwen3-max", "dashscope", "qwen3-max", "chat", "https://dashscope.aliyuncs.com/compatible-mode/v1"],
    ["glm-4.6", "zhipu", "glm-4.6", "chat", "https://open.bigmodel.cn/api/paas/v4"],
    ["grok-4", "xai", "grok-4", "chat", "https://api.x.ai/v1"],
    ["mistral-large-latest", "mistral", "mistral-large-latest", "chat", "https://api.mistral.ai/v1"],
    ["openrouter/anthropic/claude-3.5-sonnet", "openrouter", "anthropic/claude-3.5-sonnet", "chat", "https://openrouter.ai/api/v1"],
    ["ollama/llama3.2", "ollama", "llama3.2", "chat", "http://127.0.0.1:11434/v1"],
  ])("%s → %s / %s (%s)", (ref, provider, model, api, baseURL) => {
    const { target } = registry.resolveTarget(ref);
    expect([target.provider, target.model, target.api, target.baseURL]).toEqual([provider, model, api, baseURL]);
  });

  it("reads the key from the provider's env var", () => {
    expect(registry.resolveTarget("deepseek/deepseek-reasoner").target.apiKey).toBe("sk-d");
  });

  it("an unknown provider prefix is a ConfigError naming the known ones", () => {
    expect(() => registry.resolveTarget("nosuch/model")).toThrow(ConfigError);
    expect(() => registry.resolveTarget("nosuch/model")).toThrow(/unknown provider "nosuch".*known providers: anthropic, openai, openrouter/);
  });

  it("a hosted provider without a key is a ConfigError naming the env var", () => {
    const bare = createProviderRegistry({ env: {} });
    expect(() => bare.resolveTarget("groq/llama-3.3-70b")).toThrow(/GROQ_API_KEY/);
  });

  it("custom needs an apiBase", () => {
    expect(() => createProviderRegistry({ env: {} }).resolveTarget("custom/m")).toThrow(/apiBase/);
  });

  it("a bare unknown name goes to the first configured provider, else is an error", () => {
    const reg = createProviderRegistry({ providers: { vllm: { apiBase: "http://10.0.0.2:8000/v1" } }, env: {} });
    expect(reg.resolveTarget("my-finetune").target).toMatchObject({ provider: "vllm", baseURL: "http://10.0.0.2:8000/v1" });
    expect(() => createProviderRegistry({ env: {} }).resolveTarget("my-finetune")).toThrow(/write it as provider\/model/);
  });
});

describe("settings inputs", () => {
  it("Python-style providers entries set key, base, api and headers", () => {
    const reg = createProviderRegistry({
      providers: { anthropic: { apiKey: "k1", apiBase: "https://proxy.example/v1", extraHeaders: { "x-team": "a" } }, mine: { apiBase: "http://h/v1", api: "responses" } },
      env: {},
    });
    expect(reg.resolveTarget("anthropic/claude-x").target).toMatchObject({ api: "anthropic", apiKey: "k1", baseURL: "https://proxy.example/v1", headers: { "x-team": "a" } });
    expect(reg.resolveTarget("mine/m1").target).toMatchObject({ provider: "mine", api: "responses", baseURL: "http://h/v1" });
    expect(reg.knownProviders).toContain("mine");
  });

  it("Go-style llmProviders entries map dialect to wire API", () => {
    const reg = createProviderRegistry({
      llmProviders: { corp: { dialect: "AnthropicMessages", baseURL: "https://corp/", apiKey: "c" }, oai: { dialect: "OpenAIResponses", baseURL: "https://o/v1", apiKey: "o" } },
      env: {},
    });
    expect(reg.resolveTarget("corp/claude-x").target).toMatchObject({ api: "anthropic", baseURL: "https://corp/", apiKey: "c" });
    expect(reg.resolveTarget("oai/gpt-5").target).toMatchObject({ api: "responses" });
    expect(wireApiFromDialect("OpenAIChatCompletions")).toBe("chat");
    expect(() => wireApiFromDialect("carrier-pigeon")).toThrow(ConfigError);
  });

  it("model presets resolve by name and carry their defaults", () => {
    const reg = createProviderRegistry({
      env,
      modelPresets: { fast: { model: "deepseek-chat", maxTokens: 1000, contextWindowTokens: 64000, temperature: 0.3 }, smart: { model: "claude-opus-4", provider: "anthropic", reasoningEffort: "high" } },
    });
    expect(reg.parseRef("fast")).toMatchObject({ provider: "deepseek", model: "deepseek-chat" });
    expect(reg.resolveModel("fast")).toMatchObject({ provider: "deepseek", model: "deepseek-chat", contextWindow: 64000 });
    expect(reg.parseRef("smart")).toMatchObject({ provider: "anthropic", model: "claude-opus-4", preset: { reasoningEffort: "high" } });
  });
});

describe("resolved models talk to the server", () => {
  let fake: FakeLLM;
  beforeEach(async () => {
    fake = await startFakeLLM();
  });
  afterEach(async () => {
    await fake.close();
  });

  it("custom/<model> speaks chat to apiBase with the configured key and preset defaults", async () => {
    const reg = createProviderRegistry({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "secret", extraHeaders: { "x-extra": "1" } } },
      modelPresets: { local: { model: "custom/qwen-local", maxTokens: 321, temperature: 0.2 } },
      env: {},
    });
    fake.enqueue({ text: "hello from custom" });
    const { response } = await collect(reg.resolveModel("local").stream(ask("hi")));
    expect(response?.message.content).toEqual([{ type: "text", text: "hello from custom" }]);
    const req = fake.requests[0];
    expect(req?.api).toBe("chat");
    expect(req?.headers["authorization"]).toBe("Bearer secret");
    expect(req?.headers["x-extra"]).toBe("1");
    expect(req?.body).toMatchObject({ model: "qwen-local", max_tokens: 321, temperature: 0.2 });
  });

  it("anthropic models send x-api-key and anthropic-version", async () => {
    const reg = createProviderRegistry({ providers: { anthropic: { apiBase: fake.anthropicBaseURL, apiKey: "ak" } }, env: {} });
    fake.enqueue({ text: "hi" });
    await collect(reg.resolveModel("claude-sonnet-4-5").stream(ask("hi")));
    expect(fake.requests[0]?.headers).toMatchObject({ "x-api-key": "ak", "anthropic-version": "2023-06-01" });
  });

  it("resolveModelChain falls back to the next reference", async () => {
    const reg = createProviderRegistry({
      providers: { a: { apiBase: fake.openaiBaseURL }, b: { apiBase: fake.openaiBaseURL } },
      env: {},
    });
    fake.enqueue({ kind: "error", status: 401, body: { error: { message: "no", type: "x", param: null, code: null } } }, { text: "b answered" });
    const { response, events } = await collect(reg.resolveModelChain(["a/m1", "b/m2"], { retry: false }).stream(ask("hi")));
    expect(events.find((e) => e.type === "fallback")).toMatchObject({ from: "a/m1", to: "b/m2" });
    expect(response?.provider).toBe("b");
  });
});
