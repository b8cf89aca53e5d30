import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteSessionStore } from "../../src/session/sqlite-store.js";
import { textOf } from "../../src/core/message-helpers.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import type { InProcessRun } from "../support/cli-in-process.js";

let root: string;
let nbHome: string;
let workspace: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-agent-cli-"));
  nbHome = join(root, "nb");
  workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  fake = await startFakeLLM();
  await writeFile(
    join(root, "nanobot.json"),
    JSON.stringify({
      providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-agent-cli-0001" } },
      agents: { defaults: { model: "custom/test-model", workspace } },
    }),
  );
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

function run(args: string[]): Promise<InProcessRun> {
  return runCliInProcess(args, { env: { HOME: root, NANOBOT_HOME: nbHome }, cwd: root });
}

describe("nanobot agent -m", () => {
  it("runs one turn and prints the reply", async () => {
    fake.enqueue({ text: "Hello from the model" });
    const r = await run(["agent", "-m", "hi there"]);
    expect(r.err).toBe("");
    expect(r).toMatchObject({ code: 0, out: "Hello from the model\n" });
    const body = fake.requests[0]?.body as { model: string; messages: Array<{ role: string; content: unknown }> };
    expect(body.model).toBe("test-model");
    expect(body.messages.at(-1)).toEqual({ role: "user", content: "hi there" });
    fake.assertDone();
  });

  it("--json prints the contract object, runs tools, and keeps the session across turns", async () => {
    await writeFile(join(workspace, "notes.txt"), "the secret word is papaya\n");
    fake.enqueue(
      { toolCalls: [{ id: "call_1", name: "read_file", arguments: { path: "notes.txt" } }], usage: { promptTokens: 50, completionTokens: 5 } },
      { text: "The word is papaya.", usage: { promptTokens: 80, completionTokens: 6 } },
      { text: "You asked about notes.txt." },
    );
    const first = await run(["agent", "-m", "what is in notes.txt?", "-s", "cli:test", "--json"]);
    expect(first.code).toBe(0);
    expect(JSON.parse(first.out)).toEqual({
      content: "The word is papaya.",
      sessionKey: "cli:test",
      stopReason: "completed",
      toolsUsed: ["read_file"],
      usage: { promptTokens: 130, completionTokens: 11 },
    });
    const toolMsg = (fake.requests[1]?.body as { messages: Array<{ role: string; content: string }> }).messages.find((m) => m.role === "tool");
    expect(toolMsg?.content).toContain("papaya");

    await run(["agent", "-m", "what did I ask?", "-s", "cli:test"]);
    const third = fake.requests[2]?.body as { messages: Array<{ role: string; content: unknown }> };
    // The second turn replays the first one from the session store.
    expect(third.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
    fake.assertDone();
  });

  it("a provider failure exits 1 with one line, and the session keeps the user message", async () => {
    fake.enqueue({ kind: "error", status: 401, body: { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } } });
    const r = await run(["agent", "-m", "remember me", "-s", "cli:fail"]);
    expect(r.code).toBe(1);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toMatch(/^error: .*Incorrect API key/);
    const store = new SqliteSessionStore({ path: join(nbHome, "state.db") });
    const history = await store.loadMessages("cli:fail");
    await store.close();
    expect(history.map((m) => [m.role, textOf(m)])).toEqual([
      ["user", "remember me"],
      ["assistant", "[Assistant reply unavailable due to model error.]"],
    ]);
  });

  it("an unknown agent is a usage error (exit 2) naming the known agents", async () => {
    const r = await run(["agent", "-m", "hi", "--agent", "ghost"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown agent "ghost"; known agents: nanobot');
    expect(fake.requests).toHaveLength(0);
  });

  it("no provider at all is a configuration error that says how to configure one", async () => {
    await writeFile(join(root, "nanobot.json"), JSON.stringify({ agents: { defaults: { workspace } } }));
    const r = await run(["agent", "-m", "hi"]);
    expect(r.code).toBe(2);
    expect(r.err).toContain("nanobot onboard");
    expect(r.err).toContain("OPENAI_API_KEY");
  });
});
