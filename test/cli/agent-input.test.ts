/**
 * Issue 21, items 3, 4 and 5 through the built CLI (`bin/nanobot.js`): bad input is one clear
 * line and exit 2 before anything runs, a piped stdin is one message answered like `-m`, and
 * `/help` lists exactly the command registry.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createBuiltinCommands } from "../../src/agent/commands/builtin.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot, startNanobot } from "../support/nanobot-cli.js";

let root: string;
let fake: FakeLLM;
let env: Record<string, string>;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-agent-input-"));
  await mkdir(join(root, "ws"));
  fake = await startFakeLLM();
  await writeFile(
    join(root, "nanobot.json"),
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-fake-agent-input-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace: join(root, "ws") } },
    }),
  );
  env = { HOME: root, NANOBOT_HOME: join(root, "home") };
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

const nanobot = (args: string[], input?: string) => runNanobot(args, { cwd: root, env, ...(input !== undefined ? { input } : {}) });

/** The user message of each model request. */
const userMessages = (): unknown[] =>
  fake.requests.map((r) => (r.body as { messages: Array<{ role: string; content: unknown }> }).messages.filter((m) => m.role === "user").at(-1)?.content);

describe("agent: blank input is a usage error (exit 2, one line, the model is never asked)", () => {
  it.each([
    [["agent", "-m", ""], "error: the message is empty (-m needs some text)\n"],
    [["agent", "-m", "   "], "error: the message is empty (-m needs some text)\n"],
    [["agent", "-m", "hi", "-s", ""], "error: the session key is empty (-s needs a key such as cli:notes)\n"],
    [["agent", "-s", "  "], "error: the session key is empty (-s needs a key such as cli:notes)\n"],
  ])("nanobot %j", async (args, line) => {
    const r = await nanobot(args);
    expect(r).toMatchObject({ code: 2, stdout: "", stderr: line });
    expect(fake.requests).toHaveLength(0);
  });
});

describe("agent with stdin not a terminal: the whole input is one message", () => {
  it("echo text | nanobot agent answers it and exits 0", async () => {
    fake.enqueue({ text: "Hello, piped world" });
    const r = await nanobot(["agent"], "hi from a pipe\n");
    expect(r).toMatchObject({ code: 0, stdout: "Hello, piped world\n", stderr: "" });
    expect(userMessages()).toEqual(["hi from a pipe"]);
    fake.assertDone();
  });

  it("several lines are one message, and --json and -s apply as with -m", async () => {
    fake.enqueue({ text: "Two lines read." });
    const r = await nanobot(["agent", "--json", "-s", "cli:piped"], "first line\nsecond line\n\n");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ content: "Two lines read.", sessionKey: "cli:piped", stopReason: "completed" });
    expect(userMessages()).toEqual(["first line\nsecond line"]);
  });

  it("an empty stdin is a usage error", async () => {
    expect(await nanobot(["agent"], "  \n")).toMatchObject({ code: 2, stdout: "", stderr: "error: nothing to send: stdin was empty (pipe a message, or use -m)\n" });
    expect(fake.requests).toHaveLength(0);
  });
});

describe("/help is the command registry", () => {
  it("piped /help lists exactly the registry's commands, with no model call", async () => {
    const r = await nanobot(["agent"], "/help\n");
    expect(r.code).toBe(0);
    const registry = createBuiltinCommands();
    expect(r.stdout).toBe(`Commands:\n${registry.helpLines().join("\n")}\n`);
    const listed = r.stdout.split("\n").slice(1, -1).map((l) => l.split(/[\s—]/)[0]);
    expect(listed).toEqual(registry.list().map((c) => `/${c.name}`).sort());
    expect(listed).toEqual(expect.arrayContaining(["/model", "/history", "/skill", "/goal", "/dream", "/restart", "/stop", "/status", "/new", "/help"]));
    expect(listed).not.toContain("/threads");
    expect(fake.requests).toHaveLength(0);
  });

  it("the gateway's /help (HTTP API, web UI, channels) is the same text", { timeout: 60_000 }, async () => {
    const gateway = startNanobot(["gateway", "--port", "0"], { cwd: root, env });
    try {
      const url = (await gateway.waitFor(/listening on (http:\/\/\S+)/))[1];
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "/help" }] }),
      });
      const body = (await res.json()) as { choices: Array<{ message: { content: string } }> };
      expect(body.choices[0]?.message.content).toBe(`Commands:\n${createBuiltinCommands().helpLines().join("\n")}`);
      expect(fake.requests).toHaveLength(0);
    } finally {
      await gateway.stop();
    }
  });
});
