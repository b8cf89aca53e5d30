/**
 * Python nanobot keys whose effect had no test of its own, each shown in behaviour: on the
 * request the fake LLM receives (agent loop from config, `agent -m`) or on the gateway's jobs
 * and API. docs/python-config-keys.md points at these tests.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { Runtime } from "../../src/agent/runtime.js";
import { resolveConfig } from "../../src/config/index.js";
import { HEARTBEAT_JOB_ID } from "../../src/cron/heartbeat.js";
import { startAssistantGateway } from "../../src/gateway/assistant-gateway.js";
import { createHarness, gateTool, roles, waitFor } from "../agent/helpers.js";
import type { LoopHarness } from "../agent/helpers.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { longConversation } from "../support/conversations.js";

type Body = { messages: Array<{ role: string; content: unknown }>; tools?: Array<{ function: { name: string } }> };
const body = (fake: FakeLLM, i: number): Body => fake.requests[i]?.body as Body;
const text = (m: { content: unknown } | undefined): string => (typeof m?.content === "string" ? m.content : JSON.stringify(m?.content ?? ""));
const toolNames = (fake: FakeLLM, i: number): string[] => (body(fake, i).tools ?? []).map((t) => t.function.name);

let h: LoopHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function turn(harness: LoopHarness, content: string, chatId = "42"): Promise<void> {
  const before = harness.outbound.filter((m) => m.kind === "message").length;
  await harness.send(content, { chatId });
  await waitFor(() => harness.outbound.filter((m) => m.kind === "message").length > before);
}

describe("agents.defaults keys on the agent loop", () => {
  it("unifiedSession: true makes two chats one conversation", async () => {
    h = await createHarness({ defaults: { unifiedSession: true } });
    h.fake.enqueue({ text: "noted" }, { text: "you said apples" });
    await turn(h, "remember apples", "1");
    await turn(h, "what did I say?", "2");
    expect(body(h.fake, 1).messages.map(text).join("\n")).toContain("remember apples");
  });

  it("unifiedSession: false (the default) keeps chats apart", async () => {
    h = await createHarness({ defaults: { unifiedSession: false } });
    h.fake.enqueue({ text: "noted" }, { text: "no idea" });
    await turn(h, "remember apples", "1");
    await turn(h, "what did I say?", "2");
    expect(body(h.fake, 1).messages.map(text).join("\n")).not.toContain("remember apples");
  });

  it("disabledSkills keeps a skill out of the system prompt", async () => {
    const withSkill = async (disabled: string[]): Promise<string> => {
      const harness = await createHarness({ defaults: { disabledSkills: disabled } });
      h = harness;
      await mkdir(join(harness.workspace, "skills", "brewing"), { recursive: true });
      await writeFile(join(harness.workspace, "skills", "brewing", "SKILL.md"), "---\nname: brewing\ndescription: Brew tea properly.\n---\n\nSteep 3 minutes.\n");
      harness.fake.enqueue({ text: "ok" });
      await turn(harness, "hi");
      const system = text(body(harness.fake, 0).messages[0]);
      await harness.close();
      h = undefined;
      return system;
    };
    expect(await withSkill([])).toContain("Brew tea properly.");
    expect(await withSkill(["brewing"])).not.toContain("Brew tea properly.");
  });

  it("maxToolResultChars shortens what the model reads of a long tool result", async () => {
    const readBack = async (limit: number): Promise<string> => {
      const harness = await createHarness({
        defaults: { maxToolResultChars: limit },
        config: { tools: { exec: { sandbox: "none" } } },
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      });
      h = harness;
      // read_file is exempt (it pages itself, as in the Python nanobot); a command's output is not.
      const command = "yes 0123456789 | head -c 4000; echo END";
      harness.fake.enqueue({ toolCalls: [{ id: "c1", name: "exec", arguments: { command } }] }, { text: "read" });
      await turn(harness, "print a lot");
      const tool = body(harness.fake, 1).messages.find((m) => m.role === "tool");
      await harness.close();
      h = undefined;
      return text(tool);
    };
    expect(await readBack(16_000)).toContain("END");
    const cut = await readBack(1_000);
    expect(cut).not.toContain("END");
    expect(cut.length).toBeLessThan(2_000);
  });
});

describe("agents.defaults.consolidationRatio", () => {
  /**
   * History messages the turn's request replays after 20 messages of ~600 words, over the
   * 11,400-token history budget of a 20k window, are consolidated.
   */
  async function keptAfterConsolidation(ratio: number): Promise<number> {
    const harness = await createHarness({ defaults: { contextWindowTokens: 20_000, maxTokens: 1_000, consolidationRatio: ratio } });
    h = harness;
    await harness.runtime.store().appendMessages("telegram:42", longConversation("old question ", "old answer "));
    // One summary per consolidation round (at most five); the turn's own request takes the next.
    harness.fake.enqueue(...Array.from({ length: 5 }, (_, i) => ({ text: `Summary ${i}.` })), { text: "fresh answer" });
    await turn(harness, "new question");
    const last = body(harness.fake, harness.fake.requests.length - 1).messages;
    return last.filter((m) => /old (question|answer)/.test(text(m)) && m.role !== "system").length;
  }

  it("is the share of the token budget kept when the history is consolidated", async () => {
    const half = await keptAfterConsolidation(0.5);
    await h?.close();
    h = undefined;
    const most = await keptAfterConsolidation(0.9);
    // Whole turns are kept (a cut falls on a user message), so about, never over, the share.
    expect(half).toBeGreaterThan(0);
    expect(half).toBeLessThanOrEqual(10);
    expect(most).toBeGreaterThanOrEqual(14);
    expect(most).toBeLessThan(20);
  });
});

describe("agents.defaults.maxConcurrentSubagents", () => {
  const spawn = (id: string, task: string) => ({ id, name: "spawn", arguments: { task, label: id } });
  /** The task a sub-agent's request works on (its first user message). */
  const taskOf = (harness: LoopHarness, i: number): string => roles(harness.fake.requests[i]).find(([role]) => role === "user")?.[1] ?? "";

  async function twoSubagents(limit: number): Promise<string[]> {
    const mainGate = gateTool("wait_main");
    const subGate = gateTool("wait_sub");
    const harness = await createHarness({ defaults: { maxConcurrentSubagents: limit }, tools: [mainGate.tool, subGate.tool] });
    h = harness;
    const waitSub = { toolCalls: [{ id: "ws", name: "wait_sub", arguments: {} }] };
    harness.fake.enqueue({ toolCalls: [spawn("a", "task A"), spawn("b", "task B"), { id: "wm", name: "wait_main", arguments: {} }] }, waitSub);
    if (limit > 1) harness.fake.enqueue(waitSub);
    await harness.send("two jobs in the background");
    // As many sub-agents as the limit allows are now held inside wait_sub.
    await waitFor(() => subGate.calls === limit);
    harness.fake.enqueue(...(limit > 1 ? [] : [{ text: "A done" }, waitSub]), { text: "done" }, { text: "done" });
    subGate.release();
    await waitFor(() => harness.fake.requests.length >= 5);
    return [1, 2, 3, 4].map((i) => taskOf(harness, i));
  }

  it("1: the second sub-agent starts only when the first has finished", async () => {
    expect(await twoSubagents(1)).toEqual(["task A", "task A", "task B", "task B"]);
  });

  it("2: both run at once", async () => {
    const tasks = await twoSubagents(2);
    expect(tasks.slice(0, 2).sort()).toEqual(["task A", "task B"]);
  });
});

describe("agents.defaults.providerRetryMode", () => {
  // retry-after: 0 makes each wait zero, so the attempts are counted without waiting.
  const unavailable = { kind: "error" as const, status: 503, body: { error: { message: "overloaded", type: "server_error" } }, headers: { "retry-after": "0" } };

  it('"standard" gives up after 4 attempts; "persistent" keeps going and gets the answer', async () => {
    h = await createHarness({ defaults: { providerRetryMode: "standard" } });
    h.fake.enqueue(...Array.from({ length: 5 }, () => unavailable), { text: "finally" });
    await turn(h, "hi");
    expect(h.fake.requests).toHaveLength(4);
    expect(JSON.stringify(h.outbound)).not.toContain("finally");
    await h.close();

    h = await createHarness({ defaults: { providerRetryMode: "persistent" } });
    h.fake.enqueue(...Array.from({ length: 5 }, () => unavailable), { text: "finally" });
    await turn(h, "hi");
    expect(h.fake.requests).toHaveLength(6);
    expect(JSON.stringify(h.outbound)).toContain("finally");
  });
});

describe("tools keys on the offered tools", () => {
  it("tools.exec.enable: false and tools.web.enable: false take those tools off the request", async () => {
    h = await createHarness({ config: { tools: { exec: { enable: true }, web: { enable: true } } } });
    h.fake.enqueue({ text: "ok" });
    await turn(h, "hi");
    expect(toolNames(h.fake, 0)).toEqual(expect.arrayContaining(["exec", "web_fetch", "web_search"]));
    await h.close();

    h = await createHarness({ config: { tools: { exec: { enable: false }, web: { enable: false } } } });
    h.fake.enqueue({ text: "ok" });
    await turn(h, "hi");
    const names = toolNames(h.fake, 0);
    expect(names).toContain("read_file");
    expect(names).not.toContain("exec");
    expect(names).not.toContain("web_fetch");
    expect(names).not.toContain("web_search");
  });

  it("tools.exec.timeout stops a command that runs longer", async () => {
    h = await createHarness({ config: { tools: { exec: { timeout: 1, sandbox: "none" } } }, env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "exec", arguments: { command: "sleep 30; echo finished" } }] }, { text: "it timed out" });
    await turn(h, "run it");
    const tool = text(body(h.fake, 1).messages.find((m) => m.role === "tool"));
    expect(tool).not.toContain("finished");
    expect(tool).toMatch(/tim(ed|e) ?out/i);
  });
});

describe("gateway keys", () => {
  let root: string | undefined;
  let fake: FakeLLM | undefined;
  afterEach(async () => {
    await fake?.close();
    if (root) await rm(root, { recursive: true, force: true });
    root = undefined;
    fake = undefined;
  });

  async function gateway(extra: Record<string, unknown>, listen: { port?: number } = { port: 0 }) {
    root = await mkdtemp(join(tmpdir(), "nanobot-py-gateway-keys-"));
    fake ??= await startFakeLLM();
    const workspace = join(root, "ws");
    await mkdir(workspace, { recursive: true });
    const env = { HOME: root, NANOBOT_HOME: join(root, "home") };
    const { config } = resolveConfig(
      { providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-py-gateway-keys-0001" } }, agents: { defaults: { model: "custom/m", workspace } }, ...extra },
      { env, cwd: root, envProviders: false },
    );
    return startAssistantGateway(new Runtime({ config, home: join(root, "home"), env }), listen);
  }

  it("gateway.host and gateway.port are where the gateway listens", async () => {
    // A port that was free a moment ago, on a loopback address other than 127.0.0.1.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.2", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const assistant = await gateway({ gateway: { host: "127.0.0.2", port } }, {});
    try {
      expect(assistant.gateway.server.url).toBe(`http://127.0.0.2:${port}`);
      expect((await fetch(`http://127.0.0.2:${port}/v1/models`)).status).toBe(200);
    } finally {
      await assistant.close();
    }
  });

  it("gateway.heartbeat.intervalS sets the heartbeat job's interval; enabled: false removes it", async () => {
    const every = await gateway({ gateway: { heartbeat: { enabled: true, intervalS: 900 } } });
    try {
      expect(every.cron.get(HEARTBEAT_JOB_ID)?.schedule).toEqual({ kind: "every", everyMs: 900_000 });
    } finally {
      await every.close();
    }
    const off = await gateway({ gateway: { heartbeat: { enabled: false } } });
    try {
      expect(off.cron.get(HEARTBEAT_JOB_ID)).toBeUndefined();
    } finally {
      await off.close();
    }
  });

  it("api.timeout bounds a request to the OpenAI-compatible API", async () => {
    const assistant = await gateway({ api: { timeout: 1 } });
    try {
      fake!.enqueue({ text: "too late", delayMs: 10_000 });
      const client = new OpenAI({ baseURL: `${assistant.gateway.server.url}/v1`, apiKey: "unused", maxRetries: 0 });
      const failed = await client.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "hi" }] }).then(
        () => undefined,
        (err: unknown) => err as { status?: number; message: string },
      );
      expect(failed?.status).toBe(504);
      expect(failed?.message).toMatch(/1 ?s|timed out|timeout/i);
    } finally {
      await assistant.close();
    }
  });
});
