/**
 * Category 5 (secrets) — API keys and tokens never reach a log line or `config check` output.
 * A config holding test secrets in every place a real one goes (provider, gateway, channel,
 * MCP env/headers/args/URL, web search) is printed by `config check`, used by `agent -m`
 * in a child process with debug logs on stderr (a retried 429, a tool call, a provider 401),
 * and served by a gateway logging at debug level to a file; everything written is grepped.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/io.js";
import { loadConfig } from "../../src/config/index.js";
import { createLogger } from "../../src/core/logger.js";
import { startRuntimeGateway } from "../../src/gateway/runtime-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { REPO_ROOT, ScriptChild } from "./child-process.js";

const SECRETS = {
  provider: "sk-test-SECRET-provider-51f0c2d9",
  gateway: "gw-test-SECRET-gateway-8e21aa04",
  telegram: "123456:tg-test-SECRET-bot-token-77",
  mcpEnv: "mcp-test-SECRET-env-apikey-0c1d",
  mcpKeyEnv: "mcp-test-SECRET-env-key-19ab",
  mcpHeader: "hdr-test-SECRET-bearer-3c4d",
  mcpArg: "arg-test-SECRET-flag-5e6f",
  mcpUrlToken: "url-test-SECRET-query-7a8b",
  mcpUrlPassword: "pw-test-SECRET-userinfo-9c0d",
  search: "ws-test-SECRET-search-1e2f",
};
const SERVER = fileURLToPath(new URL("./servers/faulty-server.ts", import.meta.url));

let root: string;
let home: string;
let configFile: string;
let fake: FakeLLM;
const outputs: Array<{ where: string; text: string }> = [];
const figures = { outputs: 0, bytes: 0, leaks: 0 };

function leaksIn(text: string): string[] {
  return Object.entries(SECRETS)
    .filter(([, secret]) => text.includes(secret))
    .map(([name]) => name);
}

function record(where: string, text: string): void {
  outputs.push({ where, text });
  figures.outputs++;
  figures.bytes += text.length;
  figures.leaks += leaksIn(text).length;
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-secrets-"));
  home = join(root, "home");
  const workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  fake = await startFakeLLM();
  configFile = join(root, "nanobot.json");
  await writeFile(
    configFile,
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: SECRETS.provider } },
      agents: { defaults: { model: "custom/test-model", workspace, providerRetryMode: "standard" } },
      gateway: { host: "127.0.0.1", apiKey: SECRETS.gateway },
      channels: { telegram: { enabled: false, token: SECRETS.telegram, allowFrom: ["42"] } },
      tools: {
        web: { search: { provider: "brave", apiKey: SECRETS.search } },
        mcpServers: {
          local: {
            command: process.execPath,
            args: ["--import", "tsx", SERVER, "--api-key", SECRETS.mcpArg],
            cwd: REPO_ROOT,
            env: { FAULT: "healthy", BRAVE_API_KEY: SECRETS.mcpEnv, SEARCH_KEY: SECRETS.mcpKeyEnv },
          },
          remote: {
            url: `http://user:${SECRETS.mcpUrlPassword}@127.0.0.1:9/mcp?token=${SECRETS.mcpUrlToken}`,
            headers: { Authorization: `Bearer ${SECRETS.mcpHeader}` },
          },
        },
      },
    }),
  );
}, 60_000);

afterAll(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
  console.log(`secrets: ${figures.outputs} outputs (${figures.bytes} bytes) grepped for ${Object.keys(SECRETS).length} test secrets, ${figures.leaks} leaks`);
});

describe("secrets stay out of output and logs", () => {
  it("`config check` masks every secret", async () => {
    let out = "";
    let err = "";
    const io: CliIo = {
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: (s: string) => (err += s) },
      env: { HOME: root, NANOBOT_HOME: home },
      cwd: root,
    };
    const code = await main(["node", "nanobot", "config", "check", "--config", configFile], io);
    expect(code, err).toBe(0);
    record("config check", out + err);
    expect(leaksIn(out + err)).toEqual([]);
    // Still useful: the shape is there, the values are masked.
    expect(out).toContain('"apiKey": "sk-…');
  });

  it("`agent -m --logs` (debug logs, a retried 429, a tool call, a refused key) leaks nothing", async () => {
    fake.enqueue(
      { kind: "error", status: 429, body: { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } } },
      { toolCalls: [{ id: "call_env", name: "mcp_local_echo", arguments: { text: "hello" } }] },
      { text: "all done" },
      { kind: "error", status: 401, body: { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } } },
    );
    const env = { ...process.env, HOME: root, NANOBOT_HOME: home, NANOBOT_RETRY_SCALE: "0" };
    for (const message of ["use the echo tool", "again please"]) {
      const child = new ScriptChild(join(REPO_ROOT, "src/cli/entry.ts"), ["agent", "-m", message, "--logs", "--config", configFile, "-s", "cli:secrets"], env);
      const exit = await child.exited;
      record(`agent -m ${message}`, `${child.lines.join("\n")}\n${child.stderr}`);
      expect(exit.code === 0 || exit.code === 1, child.stderr).toBe(true);
    }
    expect(outputs.at(-2)?.text).toContain("all done");
    expect(outputs.at(-1)?.text).toMatch(/Incorrect API key/);
    // The debug logs were really on: retries and MCP are in there.
    expect(outputs.at(-2)?.text).toMatch(/retrying/);
    for (const o of outputs.slice(-2)) expect(leaksIn(o.text), o.where).toEqual([]);
  }, 120_000);

  it("a gateway logging at debug level to a file leaks nothing, whatever the requests carry", async () => {
    const loaded = await loadConfig({ configPath: configFile, env: { HOME: root, NANOBOT_HOME: home }, cwd: root });
    const logFile = join(root, "logs", "gateway-debug.log");
    const logger = createLogger({ level: "debug", file: logFile });
    const runtime = new Runtime({ config: loaded.config, home, env: { HOME: root, NANOBOT_HOME: home, NANOBOT_RETRY_SCALE: "0" }, logger });
    const running = await startRuntimeGateway(runtime, { port: 0 });
    try {
      const url = running.server.url;
      const post = (key: string, content: string) =>
        fetch(`${url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content }] }),
        });
      expect((await post(`${SECRETS.gateway}-wrong`, "x")).status).toBe(401);
      fake.enqueue({ kind: "error", status: 500, body: { error: { message: "boom", type: "server_error" } } }, { text: "ok" });
      expect((await post(SECRETS.gateway, "hello")).status).toBe(200);
      fake.enqueue({ kind: "error", status: 401, body: { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } } });
      await post(SECRETS.gateway, "fail please");
    } finally {
      await running.close();
    }
    // pino writes asynchronously to the file; give it the close of the runtime and a tick.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const logs = await readFile(logFile, "utf8");
    record("gateway debug log", logs);
    expect(logs).toMatch(/"level":\d+/);
    expect(leaksIn(logs)).toEqual([]);
  }, 60_000);

  it("the log files under the home hold no secret either", async () => {
    const dir = join(home, "logs");
    const files = await readdir(dir).catch(() => [] as string[]);
    for (const f of files) {
      const text = await readFile(join(dir, f), "utf8");
      record(`home log ${f}`, text);
      expect(leaksIn(text), f).toEqual([]);
    }
    expect(figures.leaks).toBe(0);
  });
});
