/**
 * Sub-agent cycles and depth, end to end: `bin/nanobot.js agent -m … --agent a` against the
 * scripted fake LLM, agents configured with `agents: [other]`. A call that would close a cycle
 * (a → b → a) or nest deeper than `agents.defaults.maxSubagentDepth` comes back to the calling
 * model as a tool error; the turn completes. Run `npm run build` first: the CLI runs dist/.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { activeSubagentSessions, chainFor, enterSubagentSession, holdSubagentSession, refuseSubagentCall } from "../../src/agent/subagent-chain.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

const BIN = fileURLToPath(new URL("../../bin/nanobot.js", import.meta.url));

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: unknown; tool_call_id?: string }>;
}

let root: string;
let fake: FakeLLM;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-subagent-depth-"));
  await mkdir(join(root, "ws"), { recursive: true });
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
  await rm(root, { recursive: true, force: true });
});

/** Agents `names`, each on model `m-<name>` and allowed to call the agents listed for it. */
async function writeConfig(calls: Record<string, string[]>, defaults: Record<string, unknown> = {}): Promise<string> {
  const agents: Record<string, unknown> = { defaults: { model: "custom/m-default", workspace: join(root, "ws"), ...defaults } };
  for (const [name, others] of Object.entries(calls)) {
    agents[name] = { instructions: `You are ${name}.`, model: `custom/m-${name}`, description: `Agent ${name}.`, ...(others.length ? { agents: others } : {}) };
  }
  const file = join(root, "config.json");
  await writeFile(file, JSON.stringify({ providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test-subagent-depth-01" } }, agents }));
  return file;
}

function runAgent(config: string, agent: string, message: string): Promise<{ code: number; out: string; err: string }> {
  const env = { PATH: process.env.PATH, HOME: root, NANOBOT_HOME: join(root, "home"), NO_COLOR: "1" };
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, "agent", "-m", message, "--agent", agent, "-s", "cli:depth", "--config", config], { env, cwd: root, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, out: stdout, err: stderr });
    });
  });
}

const call = (agent: string, prompt: string) => ({ toolCalls: [{ name: `chat-with-${agent}`, arguments: { prompt } }] });
const bodies = (): ChatBody[] => fake.requests.map((r) => r.body as unknown as ChatBody);
const lastToolResult = (body: ChatBody | undefined): string => String(body?.messages.filter((m) => m.role === "tool").at(-1)?.content ?? "");

describe("sub-agent cycles and depth through `nanobot agent`", () => {
  it("a → b → a is refused: b's model gets the cycle error, and the whole turn completes", async () => {
    const config = await writeConfig({ a: ["b"], b: ["a"] });
    fake.enqueue(call("b", "ask a about it"), call("a", "what do you think?"), { text: "b answers alone" }, { text: "a got: b answers alone" });
    const r = await runAgent(config, "a", "start");
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim()).toBe("a got: b answers alone");
    // a ran once at the top; the nested a was never started.
    expect(bodies().map((b) => b.model)).toEqual(["m-a", "m-b", "m-b", "m-a"]);
    expect(lastToolResult(bodies()[2])).toMatch(/^sub-agent cycle: a → b → a refused/);
    expect(lastToolResult(bodies()[3])).toBe("b answers alone");
    fake.assertDone();
  });

  it("with the default limit 3, a → b → c → d runs and d's call to e is refused", async () => {
    const config = await writeConfig({ a: ["b"], b: ["c"], c: ["d"], d: ["e"], e: [] });
    fake.enqueue(call("b", "1"), call("c", "2"), call("d", "3"), call("e", "4"), { text: "d alone" }, { text: "c: d alone" }, { text: "b: c: d alone" }, { text: "a: b: c: d alone" });
    const r = await runAgent(config, "a", "go deep");
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim()).toBe("a: b: c: d alone");
    expect(bodies().map((b) => b.model)).toEqual(["m-a", "m-b", "m-c", "m-d", "m-d", "m-c", "m-b", "m-a"]);
    expect(lastToolResult(bodies()[4])).toMatch(/^sub-agent depth limit 3 reached: a → b → c → d → e refused/);
    fake.assertDone();
  });

  it("agents.defaults.maxSubagentDepth: 1 lets a call b, but not b call c", async () => {
    const config = await writeConfig({ a: ["b"], b: ["c"], c: [] }, { maxSubagentDepth: 1 });
    fake.enqueue(call("b", "1"), call("c", "2"), { text: "b alone" }, { text: "a: b alone" });
    const r = await runAgent(config, "a", "go");
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim()).toBe("a: b alone");
    expect(lastToolResult(bodies()[2])).toMatch(/^sub-agent depth limit 1 reached: a → b → c refused/);
  });

  it("the chain goes through spawn: a sub-agent spawned by a that calls b, whose model calls a, is refused", async () => {
    const config = await writeConfig({ a: ["b"], b: ["a"] });
    fake.enqueue(
      { toolCalls: [{ name: "spawn", arguments: { task: "ask b", wait: true } }] },
      call("b", "from the spawned run"),
      call("a", "back to a"),
      { text: "b alone" },
      { text: "spawned: b alone" },
      { text: "a: spawned: b alone" },
    );
    const r = await runAgent(config, "a", "spawn one");
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim()).toBe("a: spawned: b alone");
    expect(bodies().map((b) => b.model)).toEqual(["m-a", "m-a", "m-b", "m-b", "m-a", "m-a"]);
    expect(lastToolResult(bodies()[3])).toMatch(/^sub-agent cycle: a → b → a refused/);
  });
});

describe("the chain registry", () => {
  it("keeps a sub-agent session's chain while a background run holds it, and forgets it after", () => {
    const before = activeSubagentSessions();
    const leave = enterSubagentSession("subagent:a:b:test1", ["a", "b"]);
    const hold = holdSubagentSession("subagent:a:b:test1");
    leave();
    // The turn ended, a spawned run still works in the session: b → a is still a cycle.
    expect(refuseSubagentCall(chainFor("subagent:a:b:test1", "b"), "a", 3)).toMatch(/cycle: a → b → a/);
    hold();
    hold();
    expect(chainFor("subagent:a:b:test1", "b")).toEqual(["b"]);
    expect(activeSubagentSessions()).toBe(before);
    expect(holdSubagentSession(undefined)).toBeTypeOf("function");
  });
});
