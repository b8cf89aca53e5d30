/**
 * The bubblewrap sandbox, proven with real commands and the text filters switched off: nothing
 * a command does can delete outside the workspace, write memory/, read the nanobot home, see a
 * provider key, reach the host's network or touch a device (issue 18, "Must show").
 */
import { createServer, type Server } from "node:http";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ExecGuard } from "../../src/tools/builtin/exec-guard.js";
import { createExecTool } from "../../src/tools/builtin/exec.js";
import { WorkspaceGuard } from "../../src/tools/builtin/workspace-guard.js";
import type { Tool } from "../../src/tools/tool.js";
import { describeWithBwrap } from "./exec-helpers.js";
import { SANDBOX_ATTACKS } from "./fixtures/exec-corpus.js";
import { ctxFor, runTool } from "./helpers.js";

const SECRETS = ["sk-test-secret", "sk-ant-test-secret", "CONFIG-SECRET-MARKER", "STATEDB-SECRET-MARKER", "SSH-SECRET-MARKER"];
const HISTORY = '{"role":"user"}\n{"role":"assistant"}\n';

/** A guard that approves everything: what holds below is the sandbox alone. */
const OPEN_GUARD = { check: () => ({ ok: true }), verify: async () => ({ ok: true }) } as unknown as ExecGuard;

let root: string;
let nbHome: string;
let workspace: string;
let canary: string;
let server: Server;
let port: number;
let hits = 0;

function toolFor(options: { network?: boolean; allowedEnvKeys?: string[]; env?: NodeJS.ProcessEnv } = {}): Tool {
  return createExecTool({
    guard: OPEN_GUARD,
    workspaceGuard: new WorkspaceGuard({ workspace, restrictToWorkspace: false }),
    sandbox: "bwrap",
    nanobotHome: nbHome,
    configPath: path.join(nbHome, "config.json"),
    env: options.env ?? { PATH: process.env.PATH, HOME: path.join(root, "home"), LANG: "C.UTF-8", OPENAI_API_KEY: "sk-test-secret", ANTHROPIC_API_KEY: "sk-ant-test-secret", VISIBLE_TOKEN: "visible-1234" },
    ...(options.network !== undefined ? { network: options.network } : {}),
    ...(options.allowedEnvKeys ? { allowedEnvKeys: options.allowedEnvKeys } : {}),
    timeout: 30,
  });
}

function fill(command: string): string {
  return command
    .replaceAll("{CANARY_DIR}", path.dirname(canary))
    .replaceAll("{CANARY}", canary)
    .replaceAll("{NBHOME}", nbHome)
    .replaceAll("{PORT}", String(port));
}

describeWithBwrap("exec sandbox (bwrap), real commands", () => {
  let exec: Tool;
  beforeAll(async () => {
    root = await realpath(await mkdtemp(path.join(tmpdir(), "nanobot-sandbox-")));
    nbHome = path.join(root, "nb");
    workspace = path.join(nbHome, "workspace");
    canary = path.join(root, "outside", "canary.txt");
    await mkdir(path.join(workspace, "memory"), { recursive: true });
    await mkdir(path.join(root, "home", ".ssh"), { recursive: true });
    await writeFile(path.join(root, "home", ".ssh", "id_rsa"), "SSH-SECRET-MARKER\n");
    await writeFile(path.join(nbHome, "config.json"), '{"providers":{"openai":{"apiKey":"CONFIG-SECRET-MARKER"}}}\n');
    await writeFile(path.join(nbHome, "state.db"), "STATEDB-SECRET-MARKER\n");
    await writeFile(path.join(workspace, "notes.txt"), "alpha\n");
    server = createServer((_req, res) => {
      hits += 1;
      res.end("HOST-SERVER-REACHED");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    exec = toolFor();
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(root, { recursive: true, force: true });
  });

  describe("attack corpus, every filter off", () => {
    afterEach(async () => {
      // Each attack starts from the same state, whatever the one before managed.
      await mkdir(path.dirname(canary), { recursive: true });
      await writeFile(canary, "canary\n");
      await writeFile(path.join(workspace, "memory", "history.jsonl"), HISTORY);
    });
    beforeAll(async () => {
      await mkdir(path.dirname(canary), { recursive: true });
      await writeFile(canary, "canary\n");
      await writeFile(path.join(workspace, "memory", "history.jsonl"), HISTORY);
    });

    it.each(SANDBOX_ATTACKS.map((a) => [a.command, a] as const))("%j does no harm", async (_label, attack) => {
      hits = 0;
      const result = await runTool(exec, { command: fill(attack.command) }, ctxFor(workspace));
      expect(result.text).toMatch(/(Exit code: \d+|Killed by signal \w+)$/);
      expect(await readFile(canary, "utf8")).toBe("canary\n");
      expect(await readFile(path.join(workspace, "memory", "history.jsonl"), "utf8")).toBe(HISTORY);
      for (const secret of SECRETS) expect(result.text).not.toContain(secret);
      expect(result.text).not.toContain("HOST-SERVER-REACHED");
      expect(hits).toBe(0);
    });
  });

  it("lets the workspace be written, outside of memory/", async () => {
    const result = await runTool(exec, { command: "echo made > made.txt && mkdir -p a/b && cat made.txt" }, ctxFor(workspace));
    expect(result.text).toBe("made\n\n\nExit code: 0");
    expect(await readFile(path.join(workspace, "made.txt"), "utf8")).toBe("made\n");
  });

  it("shows no nanobot home above the workspace: only the mount points on the way to it", async () => {
    // ../.. holds nb (the way to the workspace) and home ($HOME, an empty tmpfs); not outside/.
    const result = await runTool(exec, { command: "ls -A ..; ls -A ../..; test -e ../config.json || echo no-config; test -e ../state.db || echo no-db" }, ctxFor(workspace));
    expect(result.text).toBe("workspace\nhome\nnb\nno-config\nno-db\n\n\nExit code: 0");
  });

  it("passes only PATH, HOME, LANG, TERM and allowedEnvKeys", async () => {
    const plain = await runTool(exec, { command: "env | cut -d= -f1 | sort" }, ctxFor(workspace));
    expect(plain.text).toBe("HOME\nLANG\nPATH\nPWD\nSHLVL\n_\n\n\nExit code: 0");
    const allowed = await runTool(toolFor({ allowedEnvKeys: ["VISIBLE_TOKEN"] }), { command: "printenv VISIBLE_TOKEN" }, ctxFor(workspace));
    expect(allowed.text).toBe("visible-1234\n\n\nExit code: 0");
  });

  it("has a private, empty $HOME and /tmp that vanish after the call", async () => {
    const name = `nanobot-private-${process.pid}-${Date.now()}`;
    const result = await runTool(exec, { command: `ls -A ~; ls -A /tmp; echo x > /tmp/${name}; echo y > ~/${name}; cat /tmp/${name} ~/${name}` }, ctxFor(workspace));
    // ~ is empty; /tmp shows only the folders on the way to what the sandbox binds from the host's
    // /tmp: this test's workspace and PATH folders (node_modules/.bin when the checkout is there).
    const bound = [root, ...(process.env.PATH ?? "").split(path.delimiter)].filter((p) => p.startsWith("/tmp/"));
    const onTheWay = new Set(bound.map((p) => path.relative("/tmp", p).split(path.sep)[0]));
    expect(result.text).toMatch(/\nx\ny\n\n\nExit code: 0$|^x\ny\n\n\nExit code: 0$/);
    const listed = result.text.slice(0, result.text.lastIndexOf("x\ny\n")).split("\n").filter(Boolean);
    for (const name of listed) expect(onTheWay).toContain(name);
    expect(existsSync(path.join(tmpdir(), name))).toBe(false);
    expect(existsSync(path.join(root, "home", name))).toBe(false);
  });

  it("has only bwrap's minimal /dev, no capabilities, and the documented limits", async () => {
    const devices = await runTool(exec, { command: "ls /dev" }, ctxFor(workspace));
    const names = (devices.text.split("\n\nExit code")[0] ?? "").split("\n").filter(Boolean);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(["console", "core", "fd", "full", "mqueue", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom", "zero"]).toContain(name);
    const caps = await runTool(exec, { command: "grep CapEff /proc/self/status; ulimit -u -f -t -c" }, ctxFor(workspace));
    expect(caps.text).toMatch(/CapEff:\s+0{16}\n.*\s8192\n.*\s2097152\n.*\s120\n.*\s0\n/);
  });

  it("binds PATH folders outside the system read-only, but never /, $HOME or the nanobot home", async () => {
    const tools = path.join(root, "tools", "bin");
    await mkdir(tools, { recursive: true });
    await writeFile(path.join(tools, "hello-tool"), "#!/bin/sh\necho hello from a PATH folder\n", { mode: 0o755 });
    const env = { PATH: `${process.env.PATH}:${tools}:/:${path.join(root, "home")}:${nbHome}`, HOME: path.join(root, "home"), OPENAI_API_KEY: "sk-test-secret" };
    const result = await runTool(toolFor({ env }), { command: `exec 2>&1; hello-tool; touch ${tools}/x; test -e ${canary} || echo no-canary; cat ~/.ssh/id_rsa ${nbHome}/config.json` }, ctxFor(workspace));
    expect(result.text).toMatch(/^hello from a PATH folder\n.*Read-only file system\nno-canary\n/s);
    for (const secret of SECRETS) expect(result.text).not.toContain(secret);
  });

  it("reaches the network only when tools.exec.network is on", async () => {
    hits = 0;
    const off = await runTool(exec, { command: `curl -s -m 3 http://127.0.0.1:${port}/` }, ctxFor(workspace));
    expect(off.text).not.toContain("HOST-SERVER-REACHED");
    expect(hits).toBe(0);
    const on = await runTool(toolFor({ network: true }), { command: `curl -s -m 3 http://127.0.0.1:${port}/` }, ctxFor(workspace));
    expect(on.text).toBe("HOST-SERVER-REACHED\n\nExit code: 0");
    expect(hits).toBe(1);
  });

  it("refuses a working_dir outside the workspace and a workspace that is the nanobot home", async () => {
    const outside = await runTool(createExecTool({ guard: OPEN_GUARD, workspaceGuard: new WorkspaceGuard({ workspace, restrictToWorkspace: false }), sandbox: "bwrap" }), { command: "pwd", working_dir: root }, ctxFor(workspace));
    expect(outside.isError).toBe(true);
    expect(outside.text).toMatch(/outside the workspace; the sandbox shows only the workspace/);
    const homeAsWorkspace = createExecTool({ guard: OPEN_GUARD, workspaceGuard: new WorkspaceGuard({ workspace: nbHome, restrictToWorkspace: false }), sandbox: "bwrap", nanobotHome: nbHome });
    const refused = await runTool(homeAsWorkspace, { command: "cat config.json" }, ctxFor(nbHome));
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/the workspace is the nanobot home/);
    expect(refused.text).not.toContain("CONFIG-SECRET-MARKER");
  });
});
