/**
 * Shared set-up for the MCP server tests: a temp nanobot home with a config pointing at the
 * fake LLM, a Runtime built from it, and a real HTTP server (node http + Hono's adapter) on a
 * free loopback port for the web-standard handler.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getRequestListener } from "@hono/node-server";
import { Runtime } from "../../src/agent/runtime.js";
import { loadConfig } from "../../src/config/load.js";
import type { LoadedConfig } from "../../src/config/load.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

export interface TestHome {
  root: string;
  home: string;
  workspace: string;
  configPath: string;
  env: Record<string, string>;
  fake: FakeLLM;
  /** Loads the config written by `writeConfig` the way the CLI does. */
  load(): Promise<LoadedConfig>;
  /** Writes `nanobot.json`: the fake LLM as provider `custom`, plus `extra` merged at the top level. */
  writeConfig(extra?: Record<string, unknown>): Promise<void>;
  cleanup(): Promise<void>;
}

export async function createTestHome(prefix: string): Promise<TestHome> {
  const root = await mkdtemp(join(tmpdir(), `nanobot-${prefix}-`));
  const home = join(root, "nb");
  const workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  const fake = await startFakeLLM();
  const configPath = join(root, "nanobot.json");
  const env = { HOME: root, NANOBOT_HOME: home, PATH: process.env.PATH ?? "" };
  const writeConfig = async (extra: Record<string, unknown> = {}): Promise<void> => {
    const agents = (extra.agents ?? {}) as Record<string, unknown>;
    const config = {
      ...extra,
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-mcp-server-0001" } },
      agents: { ...agents, defaults: { model: "custom/test-model", workspace } },
    };
    await writeFile(configPath, JSON.stringify(config));
  };
  await writeConfig();
  return {
    root,
    home,
    workspace,
    configPath,
    env,
    fake,
    writeConfig,
    load: () => loadConfig({ configPath, env, cwd: root }),
    async cleanup() {
      await fake.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export async function runtimeFor(t: TestHome): Promise<Runtime> {
  const loaded = await t.load();
  return new Runtime({ config: loaded.config, home: loaded.home, env: t.env });
}

export interface Listening {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** Serves a `Request → Response` handler on 127.0.0.1 at a free port. */
export async function listen(handler: (request: Request) => Promise<Response>): Promise<Listening> {
  const server: HttpServer = createServer(getRequestListener(handler));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The text parts of an MCP tool result, joined. */
export function resultText(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content
    .filter((c) => c.type === "text")
    .map((c) => c.text ?? "")
    .join("\n");
}
