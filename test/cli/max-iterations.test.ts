/**
 * Issue 20, item 7 through the built CLI: `agents.defaults.maxToolIterations` (Python's
 * `max_tool_iterations`) counts model calls, as the Python nanobot's runner does — not tool rounds.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { runNanobot } from "../support/nanobot-cli.js";

let root: string;
let home: string;
let workspace: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-iterations-"));
  home = join(root, "home");
  workspace = join(root, "ws");
  await mkdir(home, { recursive: true });
  await mkdir(workspace, { recursive: true });
  await writeFile(join(workspace, "notes.txt"), "kiwi\n");
  fake = await startFakeLLM();
  const config = {
    providers: { custom: { api_key: "sk-iterations-test-0001", api_base: fake.openaiBaseURL } },
    agents: { defaults: { model: "custom/test-model", workspace, max_tool_iterations: 2 } },
  };
  await writeFile(join(home, "config.json"), JSON.stringify(config));
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

describe("maxToolIterations counts model calls", () => {
  it("a tool round plus a silent retry reach a limit of 2: the next request is the no-tools wrap-up", async () => {
    fake.enqueue({ toolCalls: [{ name: "read_file", arguments: { path: "notes.txt" } }] }, { text: "" }, { text: "It says kiwi." });
    const r = await runNanobot(["agent", "-m", "what is in notes.txt?", "--json"], { cwd: root, env: { HOME: root, NANOBOT_HOME: home } });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { content: string; stopReason: string; toolsUsed: string[] };
    expect(out).toMatchObject({ content: "It says kiwi.", stopReason: "max_iterations", toolsUsed: ["read_file"] });
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests[2]?.body.tools).toBeUndefined();
    fake.assertDone();
  });
});
