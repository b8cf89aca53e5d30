import { describe, expect, it } from "vitest";
import {
  configJsonSchema,
  expandHome,
  logsDir,
  maskSecrets,
  maskValue,
  nanobotHome,
  resolveConfig,
  sessionsDir,
  stateDbPath,
  toFileShape,
} from "../../src/config/index.js";

describe("maskSecrets", () => {
  it("masks keys, tokens, secrets and passwords, keeping at most the last 4 characters", () => {
    const masked = maskSecrets({
      providers: { openai: { apiKey: "sk-proj-abcdefghijklmnop1234", apiBase: "https://api.openai.com/v1" } },
      channels: { telegram: { token: "short", allowFrom: ["me"] }, feishu: { appSecret: "" } },
      mcpServers: { s: { headers: { Authorization: "Bearer abcdefghijklmnop" }, env: { GITHUB_TOKEN: "ghp_0123456789abcdef" } } },
      email: { imap_password: "hunter2hunter2" },
      agents: { defaults: { maxTokens: 8192, contextWindowTokens: 1000 } },
      env: { OPENAI_API_KEY: { description: "the key", default: "sk-default-value-9999" } },
    });
    expect(masked).toEqual({
      providers: { openai: { apiKey: "sk-…1234", apiBase: "https://api.openai.com/v1" } },
      channels: { telegram: { token: "****", allowFrom: ["me"] }, feishu: { appSecret: "" } },
      mcpServers: { s: { headers: { Authorization: "Bea…mnop" }, env: { GITHUB_TOKEN: "ghp…cdef" } } },
      email: { imap_password: "hun…ter2" },
      agents: { defaults: { maxTokens: 8192, contextWindowTokens: 1000 } },
      env: { OPENAI_API_KEY: { description: "the key", default: "sk-…9999" } },
    });
  });

  it("never shows more than the last 4 characters of a short secret", () => {
    expect(maskValue("abcdefghijk")).toBe("****");
    expect(maskValue("")).toBe("");
  });

  it("does not modify its input", () => {
    const input = { apiKey: "sk-abcdefghijklmnop" };
    maskSecrets(input);
    expect(input.apiKey).toBe("sk-abcdefghijklmnop");
  });
});

describe("configJsonSchema", () => {
  it("is valid JSON describing agents, providers and mcpServers", () => {
    const schema = JSON.parse(JSON.stringify(configJsonSchema())) as {
      type: string;
      properties: Record<string, { properties?: Record<string, { default?: unknown }>; additionalProperties?: unknown }>;
    };
    expect(schema.type).toBe("object");
    expect(schema.properties.agents).toBeDefined();
    expect(schema.properties.agents?.properties?.defaults).toBeDefined();
    expect(schema.properties.agents?.additionalProperties).toBeTypeOf("object");
    expect(schema.properties.gateway?.properties?.port?.default).toBe(18790);
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(["providers", "llmProviders", "mcpServers", "tools", "channels", "modelPresets", "hooks", "publish", "env"]),
    );
  });
});

describe("toFileShape", () => {
  it("puts named agents back beside defaults", () => {
    const { config } = resolveConfig({ agents: { helper: { model: "m" } } }, { env: { HOME: "/h" }, envProviders: false });
    const shaped = toFileShape(config) as { agents: Record<string, unknown> };
    expect(Object.keys(shaped.agents)).toEqual(["defaults", "helper"]);
  });
});

describe("paths", () => {
  it("derives everything from NANOBOT_HOME, defaulting to ~/.nanobot", () => {
    expect(nanobotHome({ HOME: "/u/alice" })).toBe("/u/alice/.nanobot");
    expect(nanobotHome({ HOME: "/u/alice", NANOBOT_HOME: "~/nb" })).toBe("/u/alice/nb");
    expect(nanobotHome({ HOME: "/u/alice", NANOBOT_HOME: "rel" }, "/work")).toBe("/work/rel");
    expect(stateDbPath("/nb")).toBe("/nb/state.db");
    expect(sessionsDir("/nb")).toBe("/nb/sessions");
    expect(logsDir("/nb")).toBe("/nb/logs");
    expect(expandHome("~/x", { HOME: "/u/bob" })).toBe("/u/bob/x");
    expect(expandHome("/abs/~/x", { HOME: "/u/bob" })).toBe("/abs/~/x");
  });
});
