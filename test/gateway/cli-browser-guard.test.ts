/**
 * The browser guard reached from the config through the built CLI (`bin/nanobot.js gateway`,
 * so `npm run build` first): `gateway.allowedHosts` / `gateway.allowedOrigins` are read, said at
 * start, and honoured; a rebinding Host or a cross-site POST is refused and reaches no model;
 * an unknown WebSocket path is answered 404 and closed; a wildcard in either list is a config
 * error (exit 2) naming the key.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { request as httpRequest } from "node:http";
import { connect as netConnect } from "node:net";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { NANOBOT_BIN, runNanobot } from "../support/nanobot-cli.js";

let root: string;
let fake: FakeLLM;
let child: ChildProcess | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-gw-guard-"));
  await mkdir(join(root, "ws"));
  fake = await startFakeLLM();
});
afterEach(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child?.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
  child = undefined;
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

const env = (): Record<string, string> => ({ HOME: root, NANOBOT_HOME: join(root, "home") });

async function writeConfig(gateway: Record<string, unknown>): Promise<void> {
  await writeFile(
    join(root, "nanobot.json"),
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-guard-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws") } },
      gateway,
      channels: { websocket: { enabled: true, token: "ws-tok" } },
    }),
  );
}

function post(url: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method: "POST", path, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The status line of an upgrade answer; fails when the server leaves the socket open. */
function upgradeStatus(port: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = netConnect(Number(port), "127.0.0.1");
    let text = "";
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`upgrade to ${path} was left hanging`));
    }, 5_000);
    socket.on("connect", () =>
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`),
    );
    socket.on("data", (c: Buffer) => (text += c.toString()));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(text.split("\r\n")[0] ?? "");
    });
  });
}

async function until<T>(probe: () => T | undefined, what: string, ms = 30_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("nanobot gateway: the browser guard from the config", () => {
  it("says the allowlist at start, honours it, and refuses rebinding and cross-site requests", { timeout: 60_000 }, async () => {
    await writeConfig({ allowedHosts: ["bot.example.com"], allowedOrigins: ["https://app.example.com"] });
    child = spawn(process.execPath, [NANOBOT_BIN, "gateway", "--port", "0"], { cwd: root, env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...env() } });
    let out = "";
    let err = "";
    child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr?.on("data", (c: Buffer) => (err += c.toString()));
    const url = await until(() => /listening on (http:\/\/\S+)/.exec(out)?.[1], `the listening line (stderr: ${err})`);
    const port = new URL(url).port;
    expect(err).toContain("note: browsers may also use Host bot.example.com, Origin https://app.example.com (gateway.allowedHosts / gateway.allowedOrigins)");

    const completion = JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "hi" }] });
    const json = { "content-type": "application/json" };
    expect((await post(url, "/v1/chat/completions", { ...json, host: `evil.example:${port}` }, completion)).status).toBe(403);
    expect((await post(url, "/v1/chat/completions", { ...json, origin: "https://evil.example" }, completion)).status).toBe(403);
    expect((await post(url, "/api/chat", { "content-type": "text/plain" }, JSON.stringify({ message: "hi" }))).status).toBe(415);
    expect(fake.requests).toHaveLength(0);

    fake.enqueue({ text: "listed" });
    const listed = await post(url, "/v1/chat/completions", { ...json, host: `bot.example.com:${port}`, origin: "https://app.example.com" }, completion);
    expect(listed.status).toBe(200);
    expect(JSON.parse(listed.text).choices[0].message.content).toBe("listed");

    expect(await upgradeStatus(port, "/ws/?token=ws-tok")).toBe("HTTP/1.1 404 Not Found");
    expect(await upgradeStatus(port, "//ws?token=ws-tok")).toBe("HTTP/1.1 404 Not Found");
  });

  it.each([
    ["allowedHosts", ["*"], 'gateway.allowedHosts[0]: expected a host name such as "bot.example.com"'],
    ["allowedOrigins", ["*"], 'gateway.allowedOrigins[0]: expected an origin such as "https://app.example.com"'],
    ["allowedOrigins", ["https://app.example.com/path"], "gateway.allowedOrigins[0]: expected an origin"],
  ])("gateway.%s %j is a config error naming the key (exit 2)", { timeout: 30_000 }, async (key, value, message) => {
    await writeConfig({ [key]: value });
    const run = await runNanobot(["gateway", "--port", "0"], { cwd: root, env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stdout).not.toContain("listening on");
  });
});
