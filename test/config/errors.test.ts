import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/core/errors.js";
import { loadConfig } from "../../src/config/index.js";
import { tempTree } from "./helpers.js";
import type { TempTree } from "./helpers.js";

let tree: TempTree;
beforeEach(async () => {
  tree = await tempTree();
});
afterEach(async () => {
  await tree.cleanup();
});

/** Writes `name` in the temp cwd, loads it and returns the ConfigError message. */
async function errorOf(name: string, text: string, env: Record<string, string> = {}): Promise<string> {
  await tree.write(name, text);
  const err = await loadConfig({ env: { HOME: tree.home, ...env }, cwd: tree.root }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  const message = (err as ConfigError).message;
  expect(message).not.toContain("\n");
  return message;
}

describe("invalid values: one line naming the file, the key path, the expectation and the value", () => {
  it("bad type", async () => {
    expect(await errorOf("nanobot.json", '{"agents": {"defaults": {"maxTokens": "lots"}}}')).toBe(
      'nanobot.json: agents.defaults.maxTokens: expected a positive integer, got "lots"',
    );
  });

  it("negative number", async () => {
    expect(await errorOf("nanobot.yaml", "agents:\n  defaults:\n    maxTokens: -5\n")).toBe(
      "nanobot.yaml: agents.defaults.maxTokens: expected a positive integer, got -5",
    );
  });

  it("a Python key outside the Python nanobot's range is refused, as Python refuses it", async () => {
    expect(await errorOf("nanobot.json", '{"agents": {"defaults": {"consolidationRatio": 0.99}}}')).toBe(
      "nanobot.json: agents.defaults.consolidationRatio: expected a number between 0.1 and 0.95, got 0.99",
    );
    expect(await errorOf("nanobot.json", '{"agents": {"defaults": {"toolHintMaxLength": 10}}}')).toBe(
      "nanobot.json: agents.defaults.toolHintMaxLength: expected an integer between 20 and 500, got 10",
    );
    expect(await errorOf("nanobot.json", '{"agents": {"defaults": {"toolHintMaxLength": 40.5}}}')).toBe(
      "nanobot.json: agents.defaults.toolHintMaxLength: expected an integer between 20 and 500, got 40.5",
    );
  });

  it("bad enum", async () => {
    expect(await errorOf("nanobot.yaml", "agents:\n  defaults:\n    providerRetryMode: forever\n")).toBe(
      'nanobot.yaml: agents.defaults.providerRetryMode: expected one of "standard", "persistent", got "forever"',
    );
  });

  it("unknown provider api", async () => {
    expect(await errorOf("nanobot.yaml", "providers:\n  custom:\n    apiBase: http://x/v1\n    api: grpc\n")).toBe(
      'nanobot.yaml: providers.custom.api: expected one of "chat", "responses", "anthropic", got "grpc"',
    );
  });

  it("wrong shape inside a named agent, with a snake_case key reported in camelCase", async () => {
    expect(await errorOf("nanobot.yaml", "agents:\n  helper:\n    max_tokens: 1.5\n")).toBe(
      "nanobot.yaml: agents.helper.maxTokens: expected a positive integer, got 1.5",
    );
  });

  it("list items are named by index", async () => {
    expect(await errorOf("nanobot.yaml", "tools:\n  exec:\n    denyPatterns: [rm, 3]\n")).toBe(
      "nanobot.yaml: tools.exec.denyPatterns[1]: expected a string, got 3",
    );
  });

  it("missing required field", async () => {
    expect(await errorOf("nanobot.yaml", "modelPresets:\n  fast:\n    temperature: 0.2\n")).toBe(
      "nanobot.yaml: modelPresets.fast.model: expected a string, got nothing",
    );
  });

  it("bad port", async () => {
    expect(await errorOf("nanobot.json", '{"gateway": {"port": 70000}}')).toBe(
      "nanobot.json: gateway.port: expected a port number (1-65535), got 70000",
    );
  });
});

describe("missing environment variables", () => {
  it("names the variable and the key path", async () => {
    expect(await errorOf("nanobot.yaml", "providers:\n  custom:\n    apiKey: ${MY_KEY}\n")).toBe(
      "nanobot.yaml: providers.custom.apiKey: environment variable MY_KEY is not set (set it, or write ${MY_KEY:-default})",
    );
  });
});

describe("syntax errors name the file and the line", () => {
  it("YAML", async () => {
    const message = await errorOf("nanobot.yaml", "agents:\n  defaults:\n    model: [gpt-4\n  other: 1\n");
    expect(message).toBe(
      "nanobot.yaml: line 4, column 3: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]",
    );
  });

  it("YAML with a duplicate key", async () => {
    expect(await errorOf("nanobot.yaml", "gateway:\n  port: 1\ngateway:\n  port: 2\n")).toBe(
      "nanobot.yaml: line 3, column 1: invalid YAML: Map keys must be unique",
    );
  });

  it("JSON with an unquoted value", async () => {
    expect(await errorOf("nanobot.json", '{\n  "agents": {\n    "defaults": { "model": gpt }\n  }\n}\n')).toBe(
      'nanobot.json: line 3, column 28: invalid JSON: unexpected "g"; expected a value',
    );
  });

  it("JSON with a trailing comma", async () => {
    expect(await errorOf("nanobot.json", '{\n  "gateway": {"port": 1},\n}\n')).toBe(
      "nanobot.json: line 3, column 1: invalid JSON: unexpected \"}\"; expected a quoted property name",
    );
  });

  it("a top level that is not a mapping", async () => {
    expect(await errorOf("nanobot.yaml", "- a\n- b\n")).toBe(
      "nanobot.yaml: expected a mapping of settings at the top level, got a list",
    );
  });
});

describe("agents/*.md errors name the markdown file", () => {
  it("bad front-matter value", async () => {
    await tree.write("agents/writer.md", "---\ntemperature: hot\n---\nWrite.\n");
    const err = await loadConfig({ env: { HOME: tree.home }, cwd: tree.root }).catch((e: unknown) => e);
    expect((err as ConfigError).message).toBe('agents/writer.md: temperature: expected a non-negative number, got "hot"');
  });
});

describe("a --config path that does not exist", () => {
  it("is a ConfigError", async () => {
    const err = await loadConfig({ configPath: "missing.yaml", env: { HOME: tree.home }, cwd: tree.root }).catch((e: unknown) => e);
    expect((err as ConfigError).message).toBe("missing.yaml: config file not found (from --config)");
  });
});
