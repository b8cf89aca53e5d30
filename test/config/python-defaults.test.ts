/**
 * Python `config.json` keys whose default or meaning differed from the Python nanobot's, run
 * through the CLI (`nanobot agent -m`) against the fake LLM: what the model is offered and what
 * a tool call does show that each keeps the Python meaning.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/io.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

type Doc = Record<string, unknown>;
type Body = { messages: Array<{ role: string; content: unknown }>; tools?: Array<{ function: { name: string; description: string } }> };

let root: string;
let workspace: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-python-defaults-"));
  workspace = join(root, "ws");
  await mkdir(workspace, { recursive: true });
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

/** A Python-style config.json: `providers.custom`, `agents.defaults`, `tools`. */
function pythonConfig(tools: Doc, defaults: Doc = {}): Doc {
  return {
    providers: { custom: { apiKey: "sk-fake-python-defaults-01", apiBase: fake.openaiBaseURL } },
    agents: { defaults: { model: "custom/test-model", workspace, ...defaults } },
    tools,
  };
}

async function run(doc: Doc, args: string[]): Promise<{ code: number; out: string; err: string }> {
  await writeFile(join(root, "config.json"), JSON.stringify(doc));
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: { HOME: root, NANOBOT_HOME: join(root, "nb"), PATH: process.env.PATH ?? "/usr/bin:/bin" },
    cwd: root,
  };
  const code = await main(["node", "nanobot", "--config", join(root, "config.json"), ...args], io);
  return { code, out, err };
}

const body = (i: number): Body => fake.requests[i]?.body as Body;
const toolDescription = (i: number, name: string): string => body(i).tools?.find((t) => t.function.name === name)?.function.description ?? "";
const contents = (i: number): string => body(i).messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");

describe("tools.exec.timeout (Python: 0 = no limit; not capped at the model's 600 s)", () => {
  it("0 loads and runs commands without a time limit", async () => {
    fake.enqueue({ toolCalls: [{ id: "c1", name: "exec", arguments: { command: "echo finished-ok" } }] }, { text: "done" });
    const r = await run(pythonConfig({ exec: { timeout: 0, sandbox: "none" } }), ["agent", "-m", "run it"]);
    expect(r.err).not.toContain("error");
    expect(r).toMatchObject({ code: 0, out: "done\n" });
    expect(toolDescription(0, "exec")).toContain("No time limit by default");
    expect(contents(1)).toContain("finished-ok");
  });

  it("a value over 600 is the default as written", async () => {
    fake.enqueue({ text: "ok" });
    const r = await run(pythonConfig({ exec: { timeout: 900, sandbox: "none" } }), ["agent", "-m", "hi"]);
    expect(r.code).toBe(0);
    expect(toolDescription(0, "exec")).toContain("Timeout 900 s by default");
  });
});
