/**
 * The sandbox config keys reach a real turn: `nanobot agent -m` with the fake LLM asking for
 * `exec`, `nanobot status` naming the sandbox, and the gateway warning at start when there is
 * none (the built CLI, `bin/nanobot.js`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { describeWithBwrap } from "./exec-helpers.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import type { InProcessRun } from "../support/cli-in-process.js";

const BIN = fileURLToPath(new URL("../../bin/nanobot.js", import.meta.url));

let root: string;
let nbHome: string;
let workspace: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "nanobot-exec-cli-"));
  nbHome = path.join(root, "nb");
  // The default layout: the workspace inside the nanobot home, next to config.json and state.db.
  workspace = path.join(nbHome, "workspace");
  await mkdir(path.join(workspace, "memory"), { recursive: true });
  await writeFile(path.join(root, "canary.txt"), "canary\n");
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

async function writeConfig(tools: Record<string, unknown>): Promise<void> {
  await writeFile(
    path.join(nbHome, "config.json"),
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-config-secret-0001" } },
      agents: { defaults: { model: "custom/test-model" } },
      tools,
    }),
  );
}

function run(args: string[]): Promise<InProcessRun> {
  return runCliInProcess(args, { env: { HOME: root, NANOBOT_HOME: nbHome, PATH: process.env.PATH, OPENAI_API_KEY: "sk-test-secret", NANOBOT_TEST_VISIBLE: "yes-visible" }, cwd: root });
}

/** The exec result the model was sent back. */
function toolResult(): string {
  const body = fake.requests[1]?.body as { messages: Array<{ role: string; content: string }> };
  return body.messages.find((m) => m.role === "tool")?.content ?? "";
}

describeWithBwrap("nanobot agent -m: exec runs sandboxed with the config's keys", () => {
  it("hides the provider keys and the nanobot home, and keeps memory/ read-only", async () => {
    // restrictToWorkspace off: the text filters let these through, the sandbox is what holds.
    await writeConfig({ exec: { allowedEnvKeys: ["NANOBOT_TEST_VISIBLE"] } });
    const command = "env; cat ../config.json ../state.db; echo x > memory/notes.md; echo done";
    fake.enqueue({ toolCalls: [{ id: "call_1", name: "exec", arguments: { command } }] }, { text: "ok" });
    const r = await run(["agent", "-m", "show me the environment"]);
    expect(r.code).toBe(0);
    const result = toolResult();
    expect(result).toContain("NANOBOT_TEST_VISIBLE=yes-visible");
    expect(result).toMatch(/cat: \.\.\/config\.json: No such file or directory/);
    expect(result).toMatch(/memory\/notes\.md: Read-only file system/);
    expect(result).toContain("done");
    for (const secret of ["sk-test-secret", "sk-config-secret-0001"]) expect(result).not.toContain(secret);
  });

  it("deletes nothing outside the workspace, however the path is spelled (restrictToWorkspace off)", async () => {
    await writeConfig({ exec: { sandbox: "bwrap" } });
    const canary = path.join(root, "canary.txt");
    // Plain rm (rm -f is the deny list's), a path built from $PWD, cd, an interpreter.
    // One stream, so the order below is the order things happened.
    const command = `exec 2>&1; rm ${canary}; rm "\${PWD%/*/*}/canary.txt"; perl -e 'unlink "${canary}"'; cd ../.. && rm canary.txt; ls -A ${root}`;
    fake.enqueue({ toolCalls: [{ id: "call_1", name: "exec", arguments: { command } }] }, { text: "ok" });
    expect((await run(["agent", "-m", "clean up"])).code).toBe(0);
    expect(await readFile(canary, "utf8")).toBe("canary\n");
    // The sandbox shows only the way to the workspace (nb) and $HOME's empty tmpfs (root itself here).
    expect(toolResult()).toMatch(/No such file or directory[\s\S]*\nnb\n/);
    expect(toolResult()).not.toContain("canary.txt\n");
  });

  it("says bwrap in nanobot status", async () => {
    await writeConfig({ exec: { network: true } });
    const r = await run(["status"]);
    expect(r.out).toMatch(/\nsandbox {6}bwrap \(\/\S*bwrap; network on\)\n/);
  });
});

describe("no sandbox is said, and with restrictToWorkspace exec refuses", () => {
  it('status and the exec result say so for sandbox "none"', async () => {
    await writeConfig({ restrictToWorkspace: true, exec: { sandbox: "none" } });
    const status = await run(["status", "--json"]);
    expect(JSON.parse(status.out).sandbox).toBe('none — tools.exec.sandbox is "none"; exec refuses to run (install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap))');
    fake.enqueue({ toolCalls: [{ id: "call_1", name: "exec", arguments: { command: "touch ran.txt" } }] }, { text: "ok" });
    expect((await run(["agent", "-m", "touch a file"])).code).toBe(0);
    expect(toolResult()).toMatch(/exec is disabled: tools\.restrictToWorkspace is true and tools\.exec\.sandbox is "none".*apt-get install bubblewrap/);
  });

  it("the gateway warns at start", { timeout: 60_000 }, async () => {
    await writeConfig({ exec: { sandbox: "none" } });
    let child: ChildProcess | undefined = spawn(process.execPath, [BIN, "gateway", "--port", "0"], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: root, NANOBOT_HOME: nbHome, NO_COLOR: "1" },
    });
    let out = "";
    let err = "";
    child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr?.on("data", (c: Buffer) => (err += c.toString()));
    try {
      for (let i = 0; i < 300 && !out.includes("listening on"); i += 1) await new Promise((r) => setTimeout(r, 100));
      expect(out).toContain("listening on");
      expect(err).toContain('warning: exec has no sandbox: none — tools.exec.sandbox is "none"; exec runs unsandboxed, guarded only by the deny list (best-effort)');
    } finally {
      const exited = new Promise((r) => child?.once("exit", r));
      child.kill("SIGTERM");
      await exited;
      child = undefined;
    }
  });
});
