import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/index.js";

const resolve = (raw: Record<string, unknown>) =>
  resolveConfig(raw, { env: { HOME: "/h" }, file: "config.json", envProviders: false });

describe("snake_case and camelCase keys are equivalent", () => {
  it("gives the same resolved config for both spellings", () => {
    const snake = resolve({
      agents: { defaults: { max_tokens: 1000, context_window_tokens: 64000, provider_retry_mode: "persistent" } },
      tools: { restrict_to_workspace: true, exec: { allow_patterns: ["^ls"] }, mcp_servers: { my_fs: { command: "fs", tool_timeout: 5 } } },
      providers: { custom: { api_key: "k", api_base: "http://x/v1", extra_headers: { "X_Keep_Me": "1" } } },
      llm_providers: { local: { dialect: "chat", base_url: "http://y/v1" } },
    });
    const camel = resolve({
      agents: { defaults: { maxTokens: 1000, contextWindowTokens: 64000, providerRetryMode: "persistent" } },
      tools: { restrictToWorkspace: true, exec: { allowPatterns: ["^ls"] }, mcpServers: { my_fs: { command: "fs", toolTimeout: 5 } } },
      providers: { custom: { apiKey: "k", apiBase: "http://x/v1", extraHeaders: { X_Keep_Me: "1" } } },
      llmProviders: { local: { dialect: "chat", baseURL: "http://y/v1" } },
    });
    expect(snake.config).toEqual(camel.config);
    expect(snake.config.agents.defaults.maxTokens).toBe(1000);
    // Names (server names, header names) are user data and keep their spelling.
    expect(Object.keys(snake.config.mcpServers)).toEqual(["my_fs"]);
    expect(snake.config.providers.custom?.extraHeaders).toEqual({ X_Keep_Me: "1" });
    expect(snake.config.llmProviders.local?.baseURL).toBe("http://y/v1");
    expect(snake.warnings).toEqual([]);
  });

  it("keeps env var names, channel names and agent names as written", () => {
    // A bare string is a Go env description (a required variable), so the test sets it.
    const { config } = resolveConfig(
      {
        env: { MY_API_KEY: "a description" },
        channels: { my_chat: { enabled: true, allow_from: ["u1"] }, send_progress: false },
        agents: { code_reviewer: { max_tokens: 10 } },
        mcpServers: { fs: { command: "x", env: { SOME_VAR: "1" } } },
      },
      { env: { HOME: "/h", MY_API_KEY: "k" }, file: "config.json", envProviders: false },
    );
    expect(config.env).toEqual({ MY_API_KEY: "a description" });
    expect(config.channels).toEqual({ my_chat: { enabled: true, allowFrom: ["u1"] }, sendProgress: false });
    expect(config.agents.named).toEqual({ code_reviewer: { maxTokens: 10 } });
    expect(config.mcpServers.fs?.env).toEqual({ SOME_VAR: "1" });
  });

  it("prefers the camelCase value when both spellings are present, with a warning", () => {
    const { config, warnings } = resolve({ gateway: { port: 1111, api_key: "a", apiKey: "b" } });
    expect(config.gateway.apiKey).toBe("b");
    expect(warnings).toEqual([
      "config.json: gateway.apiKey: set twice (snake_case and camelCase); using the camelCase value",
    ]);
  });

  it("treats null as absent (pydantic dumps unset fields as null)", () => {
    const { config } = resolve({ agents: { defaults: { model: null, reasoningEffort: null } }, gateway: { apiKey: null } });
    expect(config.agents.defaults.model).toBeUndefined();
    expect(config.gateway).toEqual({ host: "127.0.0.1", port: 18790, allowedHosts: [], allowedOrigins: [] });
  });

  it("accepts the Go StringList forms and MCP transport spellings", () => {
    const { config } = resolve({
      agents: { a: { tools: "srv/one, srv/two", mcpServers: ["srv"] } },
      mcpServers: { srv: { url: "http://s/mcp", type: "streamableHttp" }, old: { url: "http://o/sse", type: "sse" } },
    });
    expect(config.agents.named.a?.tools).toEqual(["srv/one", "srv/two"]);
    expect(config.mcpServers.srv?.type).toBe("http");
    expect(config.mcpServers.old?.type).toBe("sse");
  });
});

describe("unknown keys are warnings, not crashes", () => {
  it("collects every unknown key with its path and drops it", () => {
    const { config, warnings } = resolve({
      colour: "blue",
      agents: { defaults: { maxTokens: 100, turbo: true }, helper: { model: "m", vibe: "chill" } },
      tools: { exec: { timeout: 5, shell: "zsh" } },
    });
    expect([...warnings].sort()).toEqual([
      "config.json: unknown key agents.defaults.turbo (ignored)",
      "config.json: unknown key agents.helper.vibe (ignored)",
      "config.json: unknown key colour (ignored)",
      "config.json: unknown key tools.exec.shell (ignored)",
    ]);
    expect(config.agents.defaults.maxTokens).toBe(100);
    expect(config.agents.named.helper).toEqual({ model: "m" });
    expect(config.tools.exec.timeout).toBe(5);
    expect("colour" in config).toBe(false);
  });

  it("still reports a real error when unknown keys are also present", () => {
    expect(() => resolve({ whatever: 1, gateway: { port: "x" } })).toThrow(
      'config.json: gateway.port: expected a port number (1-65535), got "x"',
    );
  });
});

describe("semantic warnings", () => {
  it("warns about a non-loopback gateway without apiKey and agents naming unknown MCP servers", () => {
    const { warnings } = resolve({ gateway: { host: "0.0.0.0" }, agents: { a: { mcpServers: ["ghost"] } } });
    expect(warnings).toEqual([
      "config.json: gateway.host is 0.0.0.0 (not loopback) but gateway.apiKey is not set; the gateway will refuse to start",
      'config.json: agents.a.mcpServers names "ghost", which is not in mcpServers',
    ]);
  });

  it("a loopback gateway needs no key", () => {
    expect(resolve({ gateway: { host: "localhost" } }).warnings).toEqual([]);
  });
});
