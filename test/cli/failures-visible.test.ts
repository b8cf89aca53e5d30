/**
 * Issue 21, item 6: failures are visible through the built CLI (`bin/nanobot.js`, run
 * `npm run build` first) — an MCP server that cannot start is named with its cause, `mcp list`
 * says why an HTTP server failed, a failed `--json` turn carries `error`, and provider retries
 * print progress instead of silence.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { shortCause } from "../../src/cli/retry-line.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

const BIN = fileURLToPath(new URL("../../bin/nanobot.js", import.meta.url));

let root: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-failures-"));
  await mkdir(join(root, "ws"));
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

async function writeConfig(extra: Record<string, unknown> = {}): Promise<void> {
  await writeFile(
    join(root, "nanobot.json"),
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-failures-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws") } },
      ...extra,
    }),
  );
}

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

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** A stdio "MCP server" that dies at start-up saying why, as a real one missing its token does. */
const BROKEN_SERVER = { command: process.execPath, args: ["-e", "console.error('boom: GITHUB_TOKEN is not set'); process.exit(3)"] };

describe("an MCP server that fails to start is named with its cause", () => {
  it("agent -m: a warning on stderr, and the turn still answers", async () => {
    await writeConfig({ mcpServers: { github: BROKEN_SERVER } });
    fake.enqueue({ text: "answered without github" });
    const r = await nanobot(["agent", "-m", "hello"]);
    expect(r.code).toBe(0);
    expect(r.out).toBe("answered without github\n");
    expect(r.err).toMatch(/warning: MCP server github failed to start: .*boom: GITHUB_TOKEN is not set/);
  });

  it("mcp list: a missing command, a refused connection and an HTTP status, each with its cause", async () => {
    const refused = await closedPort();
    const http = createServer((_req, res) => {
      res.statusCode = 404;
      res.end("no MCP endpoint here");
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    const httpPort = (http.address() as AddressInfo).port;
    try {
      await writeConfig({
        mcpServers: {
          missing: { command: "nanobot-test-no-such-command" },
          down: { url: `http://127.0.0.1:${refused}/mcp?token=secret-in-query` },
          wrong: { url: `http://127.0.0.1:${httpPort}/mcp` },
        },
      });
      const r = await nanobot(["mcp", "list", "--timeout", "10"]);
      expect(r.code).toBe(1);
      expect(r.out).toContain("missing  failed: command not found: nanobot-test-no-such-command (ENOENT)");
      expect(r.out).toContain(`down  failed: connection refused (ECONNREFUSED) at http://127.0.0.1:${refused}/mcp`);
      expect(r.out).toContain(`wrong  failed: HTTP 404 at http://127.0.0.1:${httpPort}/mcp: no MCP endpoint here`);
      expect(r.out).not.toContain("fetch failed");
      expect(r.out).not.toContain("secret-in-query");
    } finally {
      await new Promise<void>((r) => http.close(() => r()));
    }
  });
});

describe("a failed turn says why", () => {
  it("--json carries error {kind, message} and exits 1", async () => {
    await writeConfig();
    fake.enqueue({ kind: "error", status: 401, body: { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } } });
    const r = await nanobot(["agent", "-m", "hello", "--json"]);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.out) as Record<string, unknown>;
    expect(out).toMatchObject({ stopReason: "error", error: { kind: "provider", message: expect.stringContaining("Incorrect API key provided") } });
    expect(r.err).toMatch(/error: .*Incorrect API key provided/);
  });

  it("a successful --json turn has no error key", async () => {
    await writeConfig();
    fake.enqueue({ text: "fine" });
    const r = await nanobot(["agent", "-m", "hello", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).not.toHaveProperty("error");
  });

  it("a retried provider call prints progress on stderr, then the answer", async () => {
    await writeConfig();
    fake.enqueue({ kind: "hangup" }, { text: "second try worked" });
    const r = await nanobot(["agent", "-m", "hello"]);
    expect(r.code).toBe(0);
    expect(r.out).toBe("second try worked\n");
    expect(r.err).toMatch(/· provider call failed, retrying in 1 s \((ECONNRESET|UND_ERR_SOCKET|connection error[^)]*)\)…/);
  });
});

describe("retry progress names the short cause", () => {
  it("an errno, an HTTP status, or the first words", () => {
    expect(shortCause("custom connection error (ECONNREFUSED): fetch failed")).toBe("ECONNREFUSED");
    expect(shortCause("custom 503: overloaded")).toBe("HTTP 503");
    expect(shortCause("custom connection error: socket hang up at http://h:443/v1")).toBe("custom connection error: socket hang up at http://h:443/v1");
  });
});
