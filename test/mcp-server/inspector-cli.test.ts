/**
 * The MCP Inspector CLI (`@modelcontextprotocol/inspector-cli`) lists tools, prompts and
 * resources on nanobot's two MCP faces: `nanobot serve-mcp` (stdio, spawned by the Inspector)
 * and the gateway's `/mcp` (Streamable HTTP). The config gives the default agent starter
 * messages, which are published as prompts.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { startGatewayFixture } from "../gateway/helpers.js";
import type { GatewayFixture } from "../gateway/helpers.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const inspector = join(repo, "node_modules/@modelcontextprotocol/inspector-cli/build/index.js");
const tsxLoader = pathToFileURL(join(repo, "node_modules/tsx/dist/loader.mjs")).href;
const entry = join(repo, "src/cli/entry.ts");

const NAMED = { helper: { description: "A helpful agent.", starterMessages: ["Plan my day", "Summarise my inbox"] } };

/** Runs the Inspector CLI with `--method` against `target`; returns its parsed JSON output. */
function inspect(method: string, target: string[], env: Record<string, string> = {}): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [inspector, "--method", method, ...target], {
      env: { PATH: process.env.PATH ?? "", ...env },
      // The CLI checks for its package.json relative to the working directory, then imports it
      // relative to itself: run it from its own build folder so both agree.
      cwd: dirname(inspector),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`inspector exited ${code}: ${err}${out}`));
      try {
        resolve(JSON.parse(out) as Record<string, unknown>);
      } catch {
        reject(new Error(`inspector printed no JSON: ${out}${err}`));
      }
    });
  });
}

const names = (list: unknown, key = "name"): string[] => ((list ?? []) as Array<Record<string, string>>).map((i) => i[key]!);

describe("the MCP Inspector CLI on the gateway's /mcp", () => {
  let fx: GatewayFixture;
  beforeAll(async () => {
    fx = await startGatewayFixture({ named: NAMED, makeProcessor: (runtime) => new AgentLoop({ runtime }) });
  });
  afterAll(async () => {
    await fx?.close();
  });

  it("lists tools, prompts and resources", async () => {
    const target = [`${fx.url}/mcp`, "--transport", "http"];
    expect(names((await inspect("tools/list", target)).tools)).toEqual(["chat-with-helper"]);
    expect(names((await inspect("prompts/list", target)).prompts)).toEqual(["helper-starter-1", "helper-starter-2"]);
    expect(names((await inspect("resources/list", target)).resources, "uri")).toEqual(["chat://history", "chat://progress"]);
  }, 120_000);
});

describe("the MCP Inspector CLI on serve-mcp (stdio)", () => {
  let root: string;
  let configPath: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "nanobot-inspector-"));
    await mkdir(join(root, "ws"), { recursive: true });
    configPath = join(root, "nanobot.json");
    await writeFile(
      configPath,
      JSON.stringify({
        providers: { custom: { apiBase: "http://127.0.0.1:9/v1", apiKey: "sk-test-inspector-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws") }, ...NAMED },
      }),
    );
  });
  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("lists tools, prompts and resources", async () => {
    const target = [process.execPath, "--import", tsxLoader, entry, "--config", configPath, "serve-mcp"];
    const env = { HOME: root, NANOBOT_HOME: join(root, "nb") };
    expect(names((await inspect("tools/list", target, env)).tools)).toEqual(["chat-with-helper"]);
    expect(names((await inspect("prompts/list", target, env)).prompts)).toEqual(["helper-starter-1", "helper-starter-2"]);
    expect(names((await inspect("resources/list", target, env)).resources, "uri")).toEqual(["chat://history", "chat://progress"]);
  }, 120_000);
});
