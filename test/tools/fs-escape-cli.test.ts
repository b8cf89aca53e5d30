/**
 * Issue 18, items 4 and 5 through the built CLI (`bin/nanobot.js`, run `npm run build` first):
 * `nanobot agent -m` with `tools.restrictToWorkspace: true`, the scripted fake LLM asking for
 * write_file through a dangling link, write_file on memory/history.jsonl, and web_fetch of an
 * IPv4-compatible IPv6 loopback URL. Real files, a real loopback server, a real process.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

const BIN = fileURLToPath(new URL("../../bin/nanobot.js", import.meta.url));

let root: string;
let workspace: string;
let outside: string;
let fake: FakeLLM;
let server: Server;
let port: number;
let serverHits: string[];

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "nanobot-fs-cli-")));
  workspace = join(root, "ws");
  outside = join(root, "outside");
  await mkdir(join(workspace, "memory"), { recursive: true });
  await mkdir(outside);
  await writeFile(join(workspace, "memory", "history.jsonl"), '{"summary":"kept"}\n');
  fake = await startFakeLLM();
  serverHits = [];
  server = createServer((req, res) => {
    serverHits.push(req.url ?? "/");
    res.end("loopback secret");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
  await writeFile(
    join(root, "nanobot.json"),
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-fs-cli-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace } },
      tools: { restrictToWorkspace: true, exec: { enable: false } },
    }),
  );
});
afterEach(async () => {
  await fake.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await rm(root, { recursive: true, force: true });
});

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

/** The tool results the model was sent back, in order. */
function toolResults(): string[] {
  return fake.requests.flatMap((request) =>
    ((request.body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [])
      .filter((m) => m.role === "tool")
      .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))),
  );
}

describe("nanobot agent -m: file-tool escapes and SSRF forms are refused", () => {
  it("write_file through a dangling link to outside is refused and creates nothing there", async () => {
    await symlink(join(outside, "planted.txt"), join(workspace, "link"));
    fake.enqueue(
      { toolCalls: [{ id: "call_1", name: "write_file", arguments: { path: "link", content: "pwned" } }] },
      { toolCalls: [{ id: "call_2", name: "write_file", arguments: { path: "memory/history.jsonl", content: "forged" } }] },
      { text: "Both writes were refused." },
    );
    const run = await nanobot(["agent", "-m", "write the files", "--json"]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out)).toMatchObject({ content: "Both writes were refused.", toolsUsed: ["write_file"] });
    const [dangling = "", history = ""] = toolResults().slice(-2);
    expect(dangling).toContain(`Error: access denied: 'link' resolves to ${outside}/planted.txt, which is outside the workspace`);
    expect(history).toContain("'memory/history.jsonl' is memory/history.jsonl, which nanobot maintains itself");
    expect(await readdir(outside)).toEqual([]);
    expect(await readFile(join(workspace, "memory", "history.jsonl"), "utf8")).toBe('{"summary":"kept"}\n');
    fake.assertDone();
  });

  it("web_fetch of [::127.0.0.1] and [64:ff9b::7f00:1] is refused and the loopback server gets nothing", async () => {
    fake.enqueue(
      { toolCalls: [{ id: "call_1", name: "web_fetch", arguments: { url: `http://[::127.0.0.1]:${port}/` } }] },
      { toolCalls: [{ id: "call_2", name: "web_fetch", arguments: { url: `http://[64:ff9b::7f00:1]:${port}/` } }] },
      { text: "Refused." },
    );
    const run = await nanobot(["agent", "-m", "fetch it"]);
    expect(run.code).toBe(0);
    const [compat = "", nat64 = ""] = toolResults().slice(-2);
    expect(compat).toContain("URL blocked by SSRF guard: 127.0.0.1 is a loopback address (IPv4-compatible ::7f00:1)");
    expect(nat64).toContain("URL blocked by SSRF guard: 127.0.0.1 is a loopback address (NAT64 64:ff9b::7f00:1)");
    expect(serverHits).toEqual([]);
    fake.assertDone();
  });
});
