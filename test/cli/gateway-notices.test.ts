/**
 * Issue 21, item 6, the gateway's side: started through the built CLI (`bin/nanobot.js`), it
 * warns at start that the default model has no usable provider, names an MCP server that failed
 * to start on stderr, and the web UI's `/api/info` carries both for its notice bar.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

const BIN = fileURLToPath(new URL("../../bin/nanobot.js", import.meta.url));

let root: string;
let child: ChildProcess | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-gw-notices-"));
  await mkdir(join(root, "ws"));
});
afterEach(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child?.once("exit", r));
    child.kill("SIGTERM");
    await exited;
  }
  child = undefined;
  await rm(root, { recursive: true, force: true });
});

async function until<T>(probe: () => T | undefined | Promise<T | undefined>, what: () => string, ms = 60_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("nanobot gateway: start-up problems are said, not found at the first request", () => {
  it("warns about a model without a usable provider and an MCP server that failed, on stderr and in /api/info", { timeout: 150_000 }, async () => {
    await writeFile(
      join(root, "nanobot.json"),
      JSON.stringify({
        agents: { defaults: { model: "openai/gpt-4o", workspace: join(root, "ws") } },
        mcpServers: { github: { command: process.execPath, args: ["-e", "console.error('boom: GITHUB_TOKEN is not set'); process.exit(3)"] } },
      }),
    );
    // No OPENAI_API_KEY in this environment.
    child = spawn(process.execPath, [BIN, "gateway", "--port", "0"], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: root, NANOBOT_HOME: join(root, "home"), NO_COLOR: "1" },
    });
    let out = "";
    let err = "";
    child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr?.on("data", (c: Buffer) => (err += c.toString()));
    const url = await until(() => /listening on (http:\/\/\S+)/.exec(out)?.[1], () => `the listening line (stderr: ${err})`);
    expect(err).toContain('warning: the default model openai/gpt-4o cannot answer: provider "openai" has no API key');
    await until(() => (err.includes("MCP server github failed to start") ? true : undefined), () => `the MCP warning (stderr: ${err})`);
    expect(err).toMatch(/warning: MCP server github failed to start: .*boom: GITHUB_TOKEN is not set/);

    const info = (await (await fetch(`${url}/api/info`)).json()) as { notices: string[] };
    expect(info.notices).toEqual([
      expect.stringContaining('the default model openai/gpt-4o cannot answer: provider "openai" has no API key'),
      expect.stringMatching(/^MCP server github failed to start: .*GITHUB_TOKEN is not set/),
    ]);

    // The first request gets the same reason, not a bare 500.
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "hi" }] }),
    });
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toContain('provider "openai" has no API key');
  });
});
