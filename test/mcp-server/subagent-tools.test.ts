import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Runtime } from "../../src/agent/runtime.js";
import { runSessionTurn } from "../../src/agent/session-turn.js";
import { createSubagentTools, NO_CONTENT } from "../../src/agent/subagent-tools.js";
import { createTestHome, runtimeFor } from "./helpers.js";
import type { TestHome } from "./helpers.js";

let t: TestHome;
let runtime: Runtime | undefined;

beforeEach(async () => {
  t = await createTestHome("subagents");
});
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
  await t.cleanup();
});

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: unknown; tool_call_id?: string }>;
  tools?: Array<{ function: { name: string } }>;
}

const agents = {
  boss: { instructions: "You are the boss.", model: "custom/boss-model", agents: ["helper", "ghost", "boss"] },
  helper: { instructions: "You are the helper.", model: "custom/helper-model", description: "Does sums.", tools: ["list_dir"] },
};

/** Runs one turn of `boss`; Runtime.resolveAgent adds its sub-agent tools. */
async function askBoss(prompt: string): Promise<string> {
  runtime = await runtimeFor(t);
  const profile = await runtime.resolveAgent("boss");
  const result = await runSessionTurn(runtime, { sessionKey: "cli:boss", content: prompt, profile });
  return result.content;
}

describe("sub-agents as chat-with-<agent> tools", () => {
  it("runs the other agent with its own instructions, model and tools, and returns its final text", async () => {
    await t.writeConfig({ agents });
    t.fake.enqueue(
      { toolCalls: [{ id: "call_sub", name: "chat-with-helper", arguments: { prompt: "what is 6*7?" } }] },
      { text: "42" },
      { text: "The helper says 42." },
    );
    expect(await askBoss("ask the helper")).toBe("The helper says 42.");

    const [bossFirst, helper, bossLast] = t.fake.requests.map((r) => r.body as unknown as ChatBody);
    // The boss sees exactly one sub-agent tool: unknown and self references are left out.
    expect(bossFirst?.tools?.map((tool) => tool.function.name).filter((n) => n.startsWith("chat-with-"))).toEqual(["chat-with-helper"]);
    expect(helper?.model).toBe("helper-model");
    expect(helper?.messages.map((m) => m.role)).toEqual(["system", "user"]);
    expect(helper?.messages[0]?.content).toBe("You are the helper.");
    expect(helper?.messages[1]?.content).toBe("what is 6*7?");
    expect(helper?.tools?.map((tool) => tool.function.name)).toEqual(["list_dir"]);
    expect(bossLast?.model).toBe("boss-model");
    expect(bossLast?.messages.find((m) => m.role === "tool")).toMatchObject({ tool_call_id: "call_sub", content: "42" });

    // The helper ran in its own fresh session, not the boss's.
    const sessions = (await runtime?.store().listSessions())?.map((s) => s.key) ?? [];
    expect(sessions).toContain("cli:boss");
    expect(sessions.filter((k) => k.startsWith("subagent:boss:helper:"))).toHaveLength(1);
    t.fake.assertDone();
  });

  it("an empty sub-agent reply comes back as [NO CONTENT]", async () => {
    await t.writeConfig({ agents });
    t.fake.enqueue(
      { toolCalls: [{ id: "call_sub", name: "chat-with-helper", arguments: { prompt: "say nothing" } }] },
      // The engine retries an empty answer twice before giving up with no content.
      { text: "" },
      { text: "" },
      { text: "" },
      { text: "It said nothing." },
    );
    expect(await askBoss("ask the helper to be quiet")).toBe("It said nothing.");
    const last = t.fake.requests[4]?.body as unknown as ChatBody;
    expect(last.messages.find((m) => m.role === "tool")?.content).toBe(NO_CONTENT);
  });

  it("a failing sub-agent is a tool error for the parent, and the parent goes on", async () => {
    await t.writeConfig({ agents });
    t.fake.enqueue(
      { toolCalls: [{ id: "call_sub", name: "chat-with-helper", arguments: { prompt: "try" } }] },
      { kind: "error", status: 400, body: { error: { message: "model helper-model does not exist", type: "invalid_request_error" } } },
      { text: "The helper is unavailable." },
    );
    expect(await askBoss("ask")).toBe("The helper is unavailable.");
    const tool = (t.fake.requests[2]?.body as unknown as ChatBody).messages.find((m) => m.role === "tool");
    expect(String(tool?.content)).toContain("helper failed:");
    expect(String(tool?.content)).toContain("helper-model does not exist");
  });

  it("an agent without agents: gets no sub-agent tools", async () => {
    await t.writeConfig({ agents });
    runtime = await runtimeFor(t);
    expect(createSubagentTools(runtime, runtime.config.agents.named.helper)).toEqual([]);
    expect(createSubagentTools(runtime, undefined)).toEqual([]);
  });
});
