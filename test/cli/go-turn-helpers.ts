/**
 * Shared set-up for the Go-turn CLI tests: a temp root with a workspace, the scripted fake LLM,
 * the stdio hook server (test/mcp/servers/go-hooks-server.ts) and `nanobot agent -m` run as its
 * own process. Call `goTurnFixture()` at the top of a test file.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, beforeEach } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const entry = join(repo, "src/cli/entry.ts");
const tsxLoader = pathToFileURL(join(repo, "node_modules/tsx/dist/loader.mjs")).href;
const hookServer = join(repo, "test/mcp/servers/go-hooks-server.ts");

export interface ChatBody {
  model?: string;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  messages: Array<{ role: string; content: unknown; tool_call_id?: string }>;
  tools?: Array<{ function: { name: string; description?: string } }>;
}

export interface CliRun {
  code: number | null;
  out: string;
  err: string;
}

export interface GoTurnFixture {
  readonly root: string;
  readonly fake: FakeLLM;
  server(env?: Record<string, string>, extra?: Record<string, unknown>): Record<string, unknown>;
  writeConfig(agent: Record<string, unknown>, mcpServers?: Record<string, unknown>): Promise<string>;
  nanobot(config: string, message: string): Promise<CliRun>;
  body(i: number): ChatBody;
  offered(i: number): string[];
  toolResult(i: number): string;
  recorded(): Promise<Array<{ tool: string; payload: Record<string, unknown> }>>;
}

export function goTurnFixture(): GoTurnFixture {
  let root = "";
  let workspace = "";
  let recordFile = "";
  let fake: FakeLLM | undefined;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "nanobot-go-turn-"));
    workspace = join(root, "ws");
    recordFile = join(root, "hooks.jsonl");
    await mkdir(workspace, { recursive: true });
    fake = await startFakeLLM();
  });
  afterEach(async () => {
    await fake?.close();
    await rm(root, { recursive: true, force: true });
  });
  const llm = (): FakeLLM => {
    if (!fake) throw new Error("fixture used outside a test");
    return fake;
  };
  const fixture: GoTurnFixture = {
    get root() {
      return root;
    },
    get fake() {
      return llm();
    },
    server: (env = {}, extra = {}) => ({ command: process.execPath, args: ["--import", tsxLoader, hookServer], env: { RECORD_FILE: recordFile, ...env }, ...extra }),
    async writeConfig(agent, mcpServers = { hooks: fixture.server() }) {
      const file = join(root, "nanobot.yaml");
      const config = {
        providers: { custom: { apiBase: llm().openaiBaseURL, apiKey: "sk-test-go-turn-0001" } },
        agents: { defaults: { model: "custom/test-model", workspace }, main: { instructions: "You are the main agent.", ...agent } },
        mcpServers,
      };
      await writeFile(file, JSON.stringify(config, null, 2));
      return file;
    },
    nanobot: (config, message) =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, ["--import", tsxLoader, entry, "--config", config, "agent", "-m", message, "--json", "--logs"], {
          cwd: root,
          env: { PATH: process.env.PATH, HOME: root, NANOBOT_HOME: join(root, "nb") },
        });
        let out = "";
        let err = "";
        child.stdout.on("data", (d: Buffer) => (out += d.toString()));
        child.stderr.on("data", (d: Buffer) => (err += d.toString()));
        child.on("error", reject);
        child.on("close", (code) => resolve({ code, out, err }));
      }),
    body: (i) => llm().requests[i]!.body as unknown as ChatBody,
    offered: (i) => (fixture.body(i).tools ?? []).map((t) => t.function.name).sort(),
    toolResult: (i) => JSON.stringify(fixture.body(i).messages.find((m) => m.role === "tool")?.content),
    async recorded() {
      const text = await readFile(recordFile, "utf8").catch(() => "");
      return text
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { tool: string; payload: Record<string, unknown> });
    },
  };
  return fixture;
}
