/**
 * `nanobot gateway` loads what its config uses: with no channels and nobody on `/mcp`, neither a
 * channel's client library nor the MCP SDK is loaded (they cost a fresh gateway ~20 MiB of RSS
 * and a third of its start-up); the first `/mcp` request and a configured channel load theirs
 * and work. The process is the built CLI with a preload that lists the packages it loaded.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startNanobot } from "../support/nanobot-cli.js";
import type { RunningNanobot } from "../support/nanobot-cli.js";

const PRELOAD = fileURLToPath(new URL("../fixtures/probes/loaded-packages.mjs", import.meta.url));
/** Packages only a channel or the MCP endpoint needs. */
const ON_DEMAND = ["@modelcontextprotocol/sdk", "grammy", "ws", "marked"];

let root: string;
let gateway: RunningNanobot | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-gw-lazy-"));
});
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  await rm(root, { recursive: true, force: true });
});

async function start(config: Record<string, unknown>): Promise<{ gateway: RunningNanobot; base: string }> {
  await writeFile(join(root, "nanobot.json"), JSON.stringify({ agents: { defaults: { model: "openai/gpt-4o", workspace: join(root, "ws") } }, ...config }));
  gateway = startNanobot(["gateway", "--port", "0"], {
    cwd: root,
    env: {
      HOME: root,
      NANOBOT_HOME: join(root, "home"),
      NODE_OPTIONS: `--import ${PRELOAD}`,
      NANOBOT_TEST_PACKAGES_FILE: join(root, "packages.json"),
    },
  });
  const [, base] = await gateway.waitFor(/listening on (http:\/\/\S+)/, 60_000);
  return { gateway, base: base! };
}

/** The packages the gateway process has loaded so far. */
async function loadedPackages(running: RunningNanobot): Promise<string[]> {
  const file = join(root, "packages.json");
  await rm(file, { force: true });
  running.child.kill("SIGUSR2");
  for (let i = 0; i < 100; i++) {
    const text = await readFile(file, "utf8").catch(() => undefined);
    if (text) return JSON.parse(text) as string[];
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the gateway did not list its packages");
}

describe("nanobot gateway loads what its config uses", () => {
  it("starts without the MCP SDK or any channel library, and loads the SDK for the first /mcp request", { timeout: 120_000 }, async () => {
    const { gateway: running, base } = await start({});
    const atStart = await loadedPackages(running);
    expect(atStart).toContain("better-sqlite3");
    for (const name of ON_DEMAND) expect(atStart).not.toContain(name);

    const res = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "lazy-test", version: "1" } },
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("mcp-session-id")).toBeTruthy();
    expect(await res.text()).toMatch(/"serverInfo"/);
    expect(await loadedPackages(running)).toContain("@modelcontextprotocol/sdk");
  });

  it("loads a configured channel's library and the channel answers", { timeout: 120_000 }, async () => {
    const { gateway: running, base } = await start({ channels: { websocket: { enabled: true, token: "t0ken" } } });
    const atStart = await loadedPackages(running);
    expect(atStart).toContain("ws");
    expect(atStart).not.toContain("grammy");
    expect(atStart).not.toContain("@modelcontextprotocol/sdk");

    const socket = new WebSocket(`${base.replace(/^http/, "ws")}/ws?token=t0ken`);
    const ready = await new Promise<{ type: string }>((resolve, reject) => {
      socket.once("message", (data: Buffer) => resolve(JSON.parse(data.toString()) as { type: string }));
      socket.once("error", reject);
    });
    socket.close();
    expect(ready.type).toBe("ready");
  });
});
