/**
 * Shared set-up for the Go-config end-to-end tests: a temp project directory, the CLI run
 * in-process (`main`, the same code `bin/nanobot.js` runs), the fake LLM, and our stand-in MCP
 * server (test/mcp/servers/go-config-server.ts) over stdio or Streamable HTTP on 127.0.0.1.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { stringify } from "yaml";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/io.js";
import { afterAll, afterEach, beforeAll } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { freePort } from "../mcp/helpers.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, "../..");
export const SERVER = path.join(REPO, "test/mcp/servers/go-config-server.ts");

/** A stdio `mcpServers` entry running the stand-in server. */
export function stdioServer(env: Record<string, string> = {}): Record<string, unknown> {
  return { command: process.execPath, args: ["--import", "tsx", SERVER], cwd: REPO, env };
}

export interface HttpStandIn {
  url: string;
  stop(): Promise<void>;
}

/** The stand-in server on Streamable HTTP at `http://127.0.0.1:<port>/mcp`. */
export async function httpServer(env: Record<string, string> = {}): Promise<HttpStandIn> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", SERVER, "--http", String(port)], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`stand-in server exited (${String(code)})`)));
    child.stdout?.on("data", (d: Buffer) => {
      if (d.toString().includes("listening")) resolve();
    });
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill();
      }),
  };
}

export interface Project {
  root: string;
  home: string;
  write(rel: string, content: string | Record<string, unknown>): Promise<string>;
  run(args: string[], env?: Record<string, string>): Promise<{ code: number; out: string; err: string }>;
  cleanup(): Promise<void>;
}

/** Project directories made by `project()` since the last `removeProjects()`. */
const liveRoots = new Set<string>();

async function removeProjects(): Promise<void> {
  const roots = [...liveRoots];
  liveRoots.clear();
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })));
}

/**
 * The set-up a Go-config test file shares: one fake LLM for the file (started before its tests,
 * closed after them) and every project a test made removed after that test. Returns the fake,
 * usable from the tests once it has started.
 */
export function goConfigSuite(): FakeLLM {
  let started: FakeLLM | undefined;
  beforeAll(async () => {
    started = await startFakeLLM();
  });
  afterAll(async () => {
    await started?.close();
  });
  afterEach(removeProjects);
  return new Proxy({} as FakeLLM, {
    get(_target, key) {
      if (!started) throw new Error("the fake LLM starts in beforeAll; use it inside a test");
      const value = Reflect.get(started, key, started) as unknown;
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(started) : value;
    },
  });
}

export async function project(baseEnv: Record<string, string> = {}): Promise<Project> {
  const root = await mkdtemp(path.join(tmpdir(), "nanobot-go-config-"));
  liveRoots.add(root);
  const home = path.join(root, "nbhome");
  await mkdir(home, { recursive: true });
  return {
    root,
    home,
    async write(rel, content) {
      const file = path.join(root, rel);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, typeof content === "string" ? content : stringify(content));
      return file;
    },
    async run(args, env = {}) {
      let out = "";
      let err = "";
      const io: CliIo = {
        stdout: { write: (s: string) => (out += s) },
        stderr: { write: (s: string) => (err += s) },
        env: { HOME: root, NANOBOT_HOME: home, PATH: process.env.PATH ?? "", ...baseEnv, ...env },
        cwd: root,
      };
      const code = await main(["node", "nanobot", ...args], io);
      return { code, out, err };
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/** The system prompt text of a recorded chat-completions request. */
export function systemPromptOf(body: unknown): string {
  const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  const system = messages.find((m) => m.role === "system");
  if (!system) return (body as { instructions?: string; system?: unknown }).instructions ?? JSON.stringify((body as { system?: unknown }).system ?? "");
  return typeof system.content === "string" ? system.content : JSON.stringify(system.content);
}
