/**
 * Issue 21, item 7, through the built CLI (`bin/nanobot.js`): `config check` suggests the
 * closest key for a typo, and in a Go `llmProviders` entry names Go's key for a Python one; a
 * Go provider left without its base URL fails naming `llmProviders.<name>.baseURL`.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { closestKey, knownKeysAt } from "../../src/config/suggest.js";
import { configSchema } from "../../src/config/schema.js";

const BIN = fileURLToPath(new URL("../../bin/nanobot.js", import.meta.url));

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-config-hints-"));
  await mkdir(join(root, "ws"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function nanobot(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: root, env: { PATH: process.env.PATH, HOME: root, NANOBOT_HOME: join(root, "home"), NO_COLOR: "1" }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout, err: stderr }),
    );
  });
}

describe("config check: did you mean", () => {
  it("suggests the closest key for typos at any depth, and says nothing for a key like no other", async () => {
    await writeFile(
      join(root, "nanobot.json"),
      JSON.stringify({
        gatway: { port: 18790 },
        agents: { defaults: { maxTokenz: 4096, modle: "custom/m", workspace: join(root, "ws") } },
        tools: { exec: { timout: 30 } },
        providers: { custom: { apiBase: "http://127.0.0.1:8000/v1" } },
        frobnicate: true,
      }),
    );
    const r = await nanobot(["config", "check"]);
    expect(r.code).toBe(0);
    const warnings = r.err.split("\n").filter((l) => l.startsWith("warning:"));
    expect(warnings).toEqual(
      expect.arrayContaining([
        "warning: nanobot.json: unknown key gatway (ignored; did you mean gateway?)",
        "warning: nanobot.json: unknown key agents.defaults.maxTokenz (ignored; did you mean maxTokens?)",
        "warning: nanobot.json: unknown key agents.defaults.modle (ignored; did you mean model?)",
        "warning: nanobot.json: unknown key tools.exec.timout (ignored; did you mean timeout?)",
        "warning: nanobot.json: unknown key frobnicate (ignored)",
      ]),
    );
  });

  it("names Go's key in a Go llmProviders entry, and the failure later names Go's key too", async () => {
    await writeFile(
      join(root, "nanobot.yaml"),
      [
        "llmProviders:",
        "  local:",
        "    dialect: OpenAIChatCompletions",
        "    apiBase: http://127.0.0.1:8000/v1",
        "agents:",
        "  helper:",
        "    model: local/qwen",
        "    instructions: You help.",
        "",
      ].join("\n"),
    );
    const check = await nanobot(["config", "check"]);
    expect(check.err).toContain("warning: nanobot.yaml: unknown key llmProviders.local.apiBase (ignored; Go's key is baseURL)");

    const turn = await nanobot(["agent", "-m", "hi", "--agent", "helper"]);
    expect(turn.code).not.toBe(0);
    expect(turn.err).toContain('provider "local" needs a baseURL (llmProviders.local.baseURL)');
    expect(turn.err).not.toContain("needs an apiBase");
  });

  it("names the Python nanobot's key in a providers entry written with Go's", async () => {
    await writeFile(join(root, "nanobot.json"), JSON.stringify({ providers: { custom: { baseURL: "http://127.0.0.1:8000/v1" } } }));
    const r = await nanobot(["config", "check"]);
    expect(r.err).toContain("warning: nanobot.json: unknown key providers.custom.baseURL (ignored; the Python nanobot's key is apiBase)");
  });
});

describe("key suggestions read the schema", () => {
  it("knows the keys of nested, defaulted and record-valued sections", () => {
    expect(knownKeysAt(configSchema, [])).toEqual(expect.arrayContaining(["gateway", "providers", "agents", "mcpServers"]));
    expect(knownKeysAt(configSchema, ["agents", "defaults"])).toEqual(expect.arrayContaining(["maxTokens", "model", "workspace"]));
    expect(knownKeysAt(configSchema, ["llmProviders", "anything"])).toEqual(expect.arrayContaining(["baseURL", "dialect", "apiKey"]));
  });

  it("only suggests what is close enough to be a typo", () => {
    expect(closestKey("gatway", ["gateway", "channels"])).toBe("gateway");
    expect(closestKey("MAXTOKENS", ["maxTokens"])).toBe("maxTokens");
    expect(closestKey("colour", ["gateway", "channels"])).toBeUndefined();
  });
});
