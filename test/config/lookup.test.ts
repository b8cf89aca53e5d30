import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.js";
import { tempTree } from "./helpers.js";
import type { TempTree } from "./helpers.js";

let tree: TempTree;
let cwd: string;
let nanobotHome: string;

/** One config file per lookup level, each with a different model so we can tell which won. */
beforeEach(async () => {
  tree = await tempTree();
  cwd = join(tree.root, "project");
  nanobotHome = join(tree.root, "nb-home");
  await tree.write("flag/custom.yaml", "agents:\n  defaults:\n    model: from/flag\n");
  await tree.write("envcfg/env.json", '{"agents": {"defaults": {"model": "from/env"}}}');
  await tree.write("project/nanobot.yaml", "agents:\n  defaults:\n    model: from/cwd\n");
  await tree.write("nb-home/config.json", '{"agents": {"defaults": {"model": "from/home"}}}');
});
afterEach(async () => {
  await tree.cleanup();
});

const modelOf = async (opts: { configPath?: string; env?: Record<string, string> }) => {
  const loaded = await loadConfig({
    configPath: opts.configPath,
    env: { HOME: tree.home, NANOBOT_HOME: nanobotHome, ...opts.env },
    cwd,
  });
  return { model: loaded.config.agents.defaults.model, source: loaded.source, path: loaded.path };
};

describe("config lookup order: --config > NANOBOT_CONFIG > ./nanobot.* > $NANOBOT_HOME/config.*", () => {
  it("--config wins over everything", async () => {
    const r = await modelOf({ configPath: "../flag/custom.yaml", env: { NANOBOT_CONFIG: join(tree.root, "envcfg/env.json") } });
    expect(r).toEqual({ model: "from/flag", source: "flag", path: join(tree.root, "flag/custom.yaml") });
  });

  it("NANOBOT_CONFIG wins over the working directory", async () => {
    const r = await modelOf({ env: { NANOBOT_CONFIG: join(tree.root, "envcfg/env.json") } });
    expect(r).toMatchObject({ model: "from/env", source: "env" });
  });

  it("./nanobot.yaml wins over the home config", async () => {
    expect(await modelOf({})).toMatchObject({ model: "from/cwd", source: "cwd" });
  });

  it("./nanobot.json is found too", async () => {
    await tree.write("project/nanobot.yaml", "");
    const { rm } = await import("node:fs/promises");
    await rm(join(cwd, "nanobot.yaml"));
    await tree.write("project/nanobot.json", '{"agents": {"defaults": {"model": "from/cwd-json"}}}');
    expect(await modelOf({})).toMatchObject({ model: "from/cwd-json", source: "cwd" });
  });

  it("$NANOBOT_HOME/config.json is the last file looked at", async () => {
    const { rm } = await import("node:fs/promises");
    await rm(join(cwd, "nanobot.yaml"));
    expect(await modelOf({})).toMatchObject({ model: "from/home", source: "home", path: join(nanobotHome, "config.json") });
  });

  it("NANOBOT_HOME defaults to ~/.nanobot and ~ is expanded in paths", async () => {
    const { rm } = await import("node:fs/promises");
    await rm(join(cwd, "nanobot.yaml"));
    await tree.write("home/.nanobot/config.yaml", "agents:\n  defaults:\n    model: from/tilde\n    workspace: ~/ws\n");
    const loaded = await loadConfig({ env: { HOME: tree.home }, cwd });
    expect(loaded.config.agents.defaults.model).toBe("from/tilde");
    expect(loaded.config.agents.defaults.workspace).toBe(join(tree.home, "ws"));
    expect(loaded.home).toBe(join(tree.home, ".nanobot"));
    const viaTilde = await loadConfig({ configPath: "~/.nanobot/config.yaml", env: { HOME: tree.home }, cwd: tree.root });
    expect(viaTilde.config.agents.defaults.model).toBe("from/tilde");
  });

  it("with no file at all: defaults, providers from the environment, workspace under the home", async () => {
    const empty = join(tree.root, "empty");
    await tree.write("empty/.keep", "");
    const loaded = await loadConfig({
      env: {
        HOME: tree.home,
        NANOBOT_HOME: join(tree.root, "nothing-here"),
        OPENAI_API_KEY: "sk-openai-1",
        OPENAI_BASE_URL: "http://127.0.0.1:11434/v1",
        ANTHROPIC_API_KEY: "sk-ant-1",
        OPENROUTER_API_KEY: "sk-or-1",
      },
      cwd: empty,
    });
    expect(loaded.source).toBe("none");
    expect(loaded.path).toBeUndefined();
    expect(loaded.config.providers).toEqual({
      anthropic: { apiKey: "sk-ant-1", api: "anthropic" },
      openai: { apiKey: "sk-openai-1", apiBase: "http://127.0.0.1:11434/v1", api: "chat" },
      openrouter: { apiKey: "sk-or-1", apiBase: "https://openrouter.ai/api/v1", api: "chat" },
    });
    expect(loaded.envProviders).toEqual(["anthropic", "openai", "openrouter"]);
    expect(loaded.config.agents.defaults).toMatchObject({
      workspace: join(tree.root, "nothing-here", "workspace"),
      maxTokens: 8192,
      contextWindowTokens: 200000,
      temperature: 0.1,
      maxToolIterations: 200,
      maxToolResultChars: 16000,
      providerRetryMode: "standard",
      unifiedSession: false,
      consolidationRatio: 0.5,
      maxConcurrentSubagents: 1,
    });
    expect(loaded.config.gateway).toEqual({ host: "127.0.0.1", port: 18790, allowedHosts: [], allowedOrigins: [] });
    expect(loaded.config.tools).toMatchObject({ restrictToWorkspace: false, exec: { enable: true, timeout: 60 } });
  });

  it("a provider written in the file wins over the environment", async () => {
    await tree.write("project/nanobot.yaml", "providers:\n  openai:\n    apiKey: from-file-key\n");
    const loaded = await loadConfig({ env: { HOME: tree.home, OPENAI_API_KEY: "from-env" }, cwd });
    expect(loaded.config.providers.openai?.apiKey).toBe("from-file-key");
    expect(loaded.envProviders).toEqual([]);
  });

  it("an agents/ directory in the working directory is read with no config file", async () => {
    const dir = join(tree.root, "agents-only");
    await tree.write("agents-only/agents/solo.md", "---\nmodel: gpt-4.1\n---\nBe brief.\n");
    const loaded = await loadConfig({ env: { HOME: tree.home, NANOBOT_HOME: join(tree.root, "none") }, cwd: dir });
    expect(loaded.source).toBe("none");
    expect(loaded.config.agents.named).toEqual({ solo: { model: "gpt-4.1", instructions: "Be brief." } });
  });

  it("a file without extension is sniffed (JSON or YAML)", async () => {
    await tree.write("noext/cfg-json", '{"agents": {"defaults": {"model": "sniffed/json"}}}');
    await tree.write("noext/cfg-yaml", "agents:\n  defaults:\n    model: sniffed/yaml\n");
    const a = await loadConfig({ configPath: join(tree.root, "noext/cfg-json"), env: { HOME: tree.home }, cwd });
    const b = await loadConfig({ configPath: join(tree.root, "noext/cfg-yaml"), env: { HOME: tree.home }, cwd });
    expect([a.format, a.config.agents.defaults.model]).toEqual(["json", "sniffed/json"]);
    expect([b.format, b.config.agents.defaults.model]).toEqual(["yaml", "sniffed/yaml"]);
  });
});
