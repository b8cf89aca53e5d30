import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { defaultAgentName, defaultModel, loadConfig } from "../../src/config/index.js";
import { FIXTURES } from "./helpers.js";

const HOME = "/nonexistent-home";

describe("a Python nanobot config.json loads unmodified", () => {
  it("resolves agents.defaults, providers, channels, tools, gateway, modelPresets and api", async () => {
    const loaded = await loadConfig({ configPath: join(FIXTURES, "python/config.json"), env: { HOME }, cwd: FIXTURES });
    const { config } = loaded;
    expect(loaded.source).toBe("flag");
    expect(loaded.format).toBe("json");
    expect(config.agents.defaults).toMatchObject({
      model: "openrouter/anthropic/claude-sonnet-4.5",
      provider: "auto",
      workspace: "/nonexistent-home/.nanobot/workspace",
      maxTokens: 16384,
      contextWindowTokens: 131072,
      temperature: 0.2,
      maxToolIterations: 60,
      providerRetryMode: "persistent",
      timezone: "Asia/Shanghai",
      maxConcurrentSubagents: 2,
      fallbackModels: [],
    });
    expect(config.agents.defaults.reasoningEffort).toBeUndefined(); // null in the file
    expect(config.agents.named).toEqual({});
    expect(config.providers.openrouter).toEqual({ apiKey: "sk-or-v1-0123456789abcdef0123456789abcdef" });
    expect(config.providers.vllm).toEqual({ apiKey: "dummy", apiBase: "http://localhost:8000/v1" });
    expect(config.providers.aihubmix?.extraHeaders).toEqual({ "APP-Code": "ABCD1234" });
    // Provider names are user data: snake_case names stay as written.
    expect(Object.keys(config.providers)).toContain("dashscope_coding_plan");
    expect(config.channels.sendProgress).toBe(true);
    expect(config.channels.telegram).toMatchObject({ enabled: true, allowFrom: ["alice_tg", "987654321"], replyToMessage: false });
    expect(config.tools.restrictToWorkspace).toBe(true);
    expect(config.tools.exec).toMatchObject({ timeout: 120, enable: true, allowPatterns: [], denyPatterns: [] });
    expect(config.tools.web.search).toMatchObject({ apiKey: "BSA-test-brave-key-9876", maxResults: 5 });
    // tools.mcpServers is merged into the top-level mcpServers.
    expect(config.mcpServers.filesystem).toMatchObject({ type: "stdio", command: "npx", toolTimeout: 30 });
    expect(config.mcpServers.remote_search).toMatchObject({
      type: "http",
      url: "https://mcp.example.com/mcp",
      enabledTools: ["search", "fetch_page"],
    });
    expect(config.gateway).toMatchObject({ host: "0.0.0.0", port: 18790, heartbeat: { enabled: true, intervalS: 1800 } });
    // api.host/port are "not supported by nanobot (TS)" (the API is on the gateway's port): dropped,
    // quietly here because they are the Python defaults.
    expect(config.api).toEqual({ timeout: 120 });
    expect(config.modelPresets.deep_think).toEqual({
      model: "anthropic/claude-opus-4-5",
      contextWindowTokens: 200000,
      reasoningEffort: "high",
    });
    expect(loaded.warnings).toEqual([
      expect.stringContaining("gateway.host is 0.0.0.0 (not loopback) but gateway.apiKey is not set"),
    ]);
    expect(defaultModel(config)).toBe("openrouter/anthropic/claude-sonnet-4.5");
  });
});

describe("a Go nanobot nanobot.yaml loads unmodified", () => {
  const env = { HOME, ANTHROPIC_API_KEY: "sk-ant-test-0000000000001234" };

  it("resolves named agents, mcpServers, llmProviders, publish and env", async () => {
    const loaded = await loadConfig({ env, cwd: join(FIXTURES, "go") });
    const { config } = loaded;
    expect(loaded.source).toBe("cwd");
    expect(loaded.path).toBe(join(FIXTURES, "go/nanobot.yaml"));
    // Every Go field either works or is named with the reason it does not.
    // starterMessages are published as MCP prompts, so nothing here is left unused.
    expect(loaded.warnings).toEqual([]);
    expect(Object.keys(config.agents.named)).toEqual(["shopper", "comparer"]);
    expect(config.agents.named.shopper).toMatchObject({
      name: "Shopper",
      model: "claude-sonnet-4-5",
      instructions: "You are a friendly shopping assistant.\nAlways show prices in the user's currency.\n",
      mcpServers: ["store"],
      tools: ["browser/open_page"],
      agents: ["comparer"],
      temperature: 0.4,
      maxTokens: 4096,
      contextWindow: 180000,
      hooks: { request: ["guard/check_request"] },
    });
    expect(config.agents.named.comparer?.instructions).toEqual({ mcpServer: "prompts", prompt: "compare", args: { style: "terse" } });
    // A JSON Schema inside the config keeps its property names.
    expect(config.agents.named.comparer?.output?.schema).toMatchObject({ required: ["winner_id", "reason"] });
    // No `type`: the MCP host picks the transport from the URL (Streamable HTTP, SSE fallback).
    expect(config.mcpServers.store).toEqual({
      url: "https://allbirds.com/api/mcp", // ${SHOP_DOMAIN} from the env section's default
      headers: { "X-Shop-Trace": "none" }, // ${TRACE_HEADER:-none}
    });
    expect(config.mcpServers.browser).toMatchObject({
      type: "stdio",
      command: "npx",
      args: ["-y", "@playwright/mcp@latest", "--headless"],
      env: { PLAYWRIGHT_BROWSERS_PATH: "/opt/browsers" },
      cwd: join(FIXTURES, "go/tools"),
    });
    expect(config.llmProviders.claude).toEqual({
      dialect: "AnthropicMessages",
      baseURL: "https://api.anthropic.com/v1",
      apiKey: "sk-ant-test-0000000000001234",
    });
    expect(config.llmProviders.local?.headers).toEqual({ "X-Client": "nanobot" });
    expect(config.publish).toMatchObject({ name: "Shopping Assistant", entrypoint: ["shopper"] });
    expect(config.env.TRACE_HEADER).toEqual({ description: "Optional trace id forwarded to the store", optional: true });
    // Go's: no max tokens unless the file writes one (each wire API's adapter default applies).
    expect(config.agents.defaults.maxTokens).toBeUndefined();
    expect(defaultAgentName(config)).toBe("shopper");
    expect(defaultModel(config)).toBe("claude-sonnet-4-5");
  });
});

describe("an agents/*.md directory loads beside the config", () => {
  it("takes front-matter as fields, the body as instructions and the file name as the agent name", async () => {
    const loaded = await loadConfig({ env: { HOME }, cwd: join(FIXTURES, "go-agents-dir") });
    const { named } = loaded.config.agents;
    expect(Object.keys(named)).toEqual(["main", "researcher"]);
    expect(named.main).toEqual({
      name: "Main Assistant",
      description: "General helper that delegates research",
      model: "gpt-4.1-mini",
      default: true,
      agents: ["researcher"],
      tools: ["search/web_search", "search/fetch"],
      temperature: 0.2,
      instructions: "You are a concise assistant.\n\nDelegate anything that needs sources to the researcher agent.",
    });
    expect(named.researcher).toMatchObject({
      model: "claude-haiku-4-5",
      mcpServers: ["search"], // mcp_servers in the front-matter
      maxTokens: 2048,
    });
    // The body is prose: ${…} in it is not a variable reference.
    expect(named.researcher?.instructions).toContain("${QUERY}");
    expect(defaultAgentName(loaded.config)).toBe("main");
    expect(loaded.warnings).toEqual([]);
  });

  it("interpolates front-matter", async () => {
    const loaded = await loadConfig({ env: { HOME, RESEARCH_MODEL: "gpt-5-mini" }, cwd: join(FIXTURES, "go-agents-dir") });
    expect(loaded.config.agents.named.researcher?.model).toBe("gpt-5-mini");
  });
});
