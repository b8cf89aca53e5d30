import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerOnboardCommand } from "../../src/cli/commands/onboard.js";
import { createContext } from "../../src/cli/context.js";
import { resolveConfig } from "../../src/config/index.js";

let root: string;
let home: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-onboard-"));
  home = join(root, "nb");
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function onboard(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const ctx = createContext({ stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: { HOME: root, NANOBOT_HOME: home }, cwd: root }, "test");
  const program = new Command("nanobot").exitOverride();
  registerOnboardCommand(program, ctx);
  await program.parseAsync(["node", "nanobot", "onboard", ...args], { from: "node" });
  return { code: ctx.exitCode, out, err };
}

const readConfig = async (): Promise<Record<string, unknown>> => JSON.parse(await readFile(join(home, "config.json"), "utf8")) as Record<string, unknown>;

describe("nanobot onboard with flags", () => {
  it("writes a config the loader accepts, and creates the workspace", async () => {
    const r = await onboard(["--provider", "openai", "--api-key", "sk-onboard-0001", "--model", "gpt-4.1-mini", "--yes"]);
    expect(r).toMatchObject({ code: 0, err: "" });
    expect(r.out).toContain(`wrote ${join(home, "config.json")}`);
    const written = await readConfig();
    expect(written).toEqual({
      providers: { openai: { apiKey: "sk-onboard-0001" } },
      agents: { defaults: { model: "openai/gpt-4.1-mini", workspace: join(home, "workspace") } },
      gateway: { host: "127.0.0.1", port: 18790 },
    });
    expect((await stat(join(home, "workspace"))).isDirectory()).toBe(true);
    expect((await stat(join(home, "config.json"))).mode & 0o777).toBe(0o600);
    const { config } = resolveConfig(written, { env: { HOME: root, NANOBOT_HOME: home }, cwd: root });
    expect(config.agents.defaults.model).toBe("openai/gpt-4.1-mini");
  });

  it("ollama needs no key and gets the local API base; the model defaults per provider", async () => {
    const r = await onboard(["--provider", "ollama", "--yes"]);
    expect(r.code).toBe(0);
    expect(await readConfig()).toMatchObject({
      providers: { ollama: { apiBase: "http://127.0.0.1:11434/v1" } },
      agents: { defaults: { model: "ollama/llama3.2" } },
    });
  });

  it("never replaces an existing config, even with --yes; --force does", async () => {
    await mkdir(home, { recursive: true });
    await writeFile(join(home, "config.json"), '{"mine": true}\n');
    const kept = await onboard(["--provider", "openai", "--api-key", "sk-x", "--yes"]);
    expect(kept.code).toBe(2);
    expect(kept.err).toContain("already exists; nothing changed");
    expect(await readConfig()).toEqual({ mine: true });
    const forced = await onboard(["--provider", "openai", "--api-key", "sk-x", "--yes", "--force"]);
    expect(forced.code).toBe(0);
    expect(await readConfig()).toMatchObject({ providers: { openai: { apiKey: "sk-x" } } });
  });

  it("missing or unknown flags are usage errors (exit 2) and write nothing", async () => {
    expect(await onboard(["--yes", "--api-key", "sk-x"])).toMatchObject({ code: 2, err: expect.stringContaining("--provider is required with --api-key") as unknown });
    expect(await onboard(["--provider", "anthropic", "--yes"])).toMatchObject({ code: 2, err: expect.stringContaining("--api-key is required") as unknown });
    expect(await onboard(["--provider", "skynet", "--yes"])).toMatchObject({ code: 2, err: expect.stringContaining('unknown provider "skynet"') as unknown });
    await expect(stat(join(home, "config.json"))).rejects.toThrow();
  });
});
