/**
 * Category 3 — MCP faults. One real Runtime with five stdio servers (`servers/faulty-server.ts`):
 * healthy, one that dies mid-call, one that hangs, one with invalid schemas and a 12 MB result,
 * and one that never answers the handshake (given a 1 s `connectTimeout`). Turns driven by the fake LLM call the faulty tools;
 * each must come back as an error (or truncated) tool result, the turn must go on to its final
 * answer, and the healthy server must keep answering.
 */
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DirectTurnProcessor } from "../../src/agent/turn-processor.js";
import type { TurnReply } from "../../src/agent/turn-processor.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM, FakeToolCall } from "../fakes/fake-llm-types.js";
import { REPO_ROOT } from "./child-process.js";
import { startRuntime, wireMessages, wireProblems, wireText } from "./helpers.js";
import type { RuntimeFixture, WireMessage } from "./helpers.js";

const SERVER = fileURLToPath(new URL("./servers/faulty-server.ts", import.meta.url));
const spec = (fault: string, extra: Record<string, unknown> = {}) => ({
  command: process.execPath,
  args: ["--import", "tsx", SERVER],
  cwd: REPO_ROOT,
  env: { FAULT: fault },
  ...extra,
});

let fake: FakeLLM;
let fx: RuntimeFixture;
const figures = { faults: 0, errorResults: 0, turnsCompleted: 0, healthyCalls: 0 };

beforeAll(async () => {
  fake = await startFakeLLM();
  fx = await startRuntime(fake, {
    extra: {
      mcpServers: {
        healthy: spec("healthy"),
        crashy: spec("crash"),
        hangy: spec("hang", { toolTimeout: 0.5 }),
        invalid: spec("invalid"),
        mute: spec("mute", { connectTimeout: 1 }),
      },
    },
  });
}, 60_000);
afterAll(async () => {
  await fx.close();
  await fake.close();
  console.log(
    `mcp faults: ${figures.faults} faults, ${figures.errorResults} error/truncated results, ${figures.turnsCompleted} turns completed, ${figures.healthyCalls} healthy calls answered`,
  );
});

/** Runs a turn where the model calls `calls` (in one round), then answers "done". */
async function turnCalling(calls: FakeToolCall[], session: string): Promise<{ reply: TurnReply; results: WireMessage[] }> {
  const before = fake.requests.length;
  fake.enqueue({ toolCalls: calls }, { text: "done" });
  const reply = await new DirectTurnProcessor(fx.runtime).process({ sessionKey: session, content: `call ${calls.map((c) => c.name).join(",")}` });
  expect(reply.stopReason, reply.error).toBe("completed");
  expect(reply.content).toBe("done");
  const sent = wireMessages(fake.requests[before + 1]);
  expect(wireProblems(sent)).toEqual([]);
  figures.turnsCompleted++;
  const results = sent.filter((m) => m.role === "tool");
  return { reply, results };
}

function resultFor(results: WireMessage[], id: string): string {
  const m = results.find((r) => r.tool_call_id === id);
  expect(m, `result for ${id}`).toBeDefined();
  return wireText(m!);
}

describe("MCP servers that fail", () => {
  it("a server that never finishes the handshake is reported after its connectTimeout and the rest start", async () => {
    figures.faults++;
    const manager = await fx.runtime.mcp();
    expect(manager.failures().map((f) => f.server)).toEqual(["mute"]);
    // The reason names the limit and the setting to raise.
    expect(manager.failures()[0]?.reason).toBe("handshake timed out after 1000 ms (mcpServers.mute.connectTimeout)");
    expect(fx.logs.some((l) => l.level === "warn" && l.msg.includes("MCP server mute failed to start"))).toBe(true);
    const names = manager.tools().map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["mcp_healthy_echo", "mcp_crashy_explode", "mcp_hangy_wait", "mcp_invalid_huge"]));
    expect(names.some((n) => n.startsWith("mcp_mute_"))).toBe(false);
  }, 60_000);

  it("a server that dies mid-call gives an error result; the healthy one answers in the same round", async () => {
    figures.faults++;
    const { results } = await turnCalling(
      [
        { id: "call_boom", name: "mcp_crashy_explode", arguments: {} },
        { id: "call_echo1", name: "mcp_healthy_echo", arguments: { text: "still here" } },
      ],
      "mcp:crash",
    );
    expect(resultFor(results, "call_boom")).toMatch(/error|closed|exited|connection/i);
    expect(resultFor(results, "call_echo1")).toBe("echo: still here");
    figures.errorResults++;
    figures.healthyCalls++;
  });

  it("the crashed server is reconnected on its next call", async () => {
    const { results } = await turnCalling([{ id: "call_echo_c", name: "mcp_crashy_echo", arguments: { text: "back" } }], "mcp:crash");
    expect(resultFor(results, "call_echo_c")).toBe("echo: back");
  });

  it("a hanging tool times out with an error result; the healthy one answers", async () => {
    figures.faults++;
    const { results } = await turnCalling(
      [
        { id: "call_wait", name: "mcp_hangy_wait", arguments: {} },
        { id: "call_echo2", name: "mcp_healthy_echo", arguments: { text: "fine" } },
      ],
      "mcp:hang",
    );
    expect(resultFor(results, "call_wait")).toMatch(/timed out/);
    expect(resultFor(results, "call_echo2")).toBe("echo: fine");
    figures.errorResults++;
    figures.healthyCalls++;
  });

  it("invalid input schemas do not take the server's good tools down", async () => {
    figures.faults++;
    const manager = await fx.runtime.mcp();
    const names = manager.tools().map((t) => t.name);
    expect(names).toContain("mcp_invalid_echo");
    // Whatever is kept of a broken tool must carry an object schema the providers accept.
    for (const tool of manager.tools().filter((t) => t.name.startsWith("mcp_invalid_"))) {
      const schema = tool.parameters as { type?: unknown; properties?: unknown };
      expect(schema.type, tool.name).toBe("object");
      expect(schema.properties === undefined || (typeof schema.properties === "object" && schema.properties !== null), tool.name).toBe(true);
    }
    const { results } = await turnCalling([{ id: "call_inv_echo", name: "mcp_invalid_echo", arguments: { text: "ok" } }], "mcp:invalid");
    expect(resultFor(results, "call_inv_echo")).toBe("echo: ok");
    const sentTools = (fake.requests.at(-1)?.body.tools ?? []) as Array<{ function: { name: string; parameters: { type?: string } } }>;
    for (const t of sentTools) expect(t.function.parameters.type, t.function.name).toBe("object");
  });

  it("a 5 MB tool result is truncated before it reaches the model", async () => {
    figures.faults++;
    const { results } = await turnCalling([{ id: "call_huge", name: "mcp_invalid_huge", arguments: { mb: 5 } }], "mcp:huge");
    const text = resultFor(results, "call_huge");
    const limit = fx.runtime.config.agents.defaults.maxToolResultChars;
    expect(text.length).toBeLessThan(limit + 2_000);
    expect(text).toMatch(/truncated|omitted|saved/i);
    figures.errorResults++;
  });

  it("a result over the stdio message limit (12 MB) fails that call only; the connection stays up", async () => {
    figures.faults++;
    const manager = await fx.runtime.mcp();
    const pidBefore = manager.connection("invalid")?.pid;
    expect(pidBefore).toBeGreaterThan(0);
    const { results } = await turnCalling(
      [
        { id: "call_too_big", name: "mcp_invalid_huge", arguments: { mb: 12 } },
        { id: "call_echo3", name: "mcp_healthy_echo", arguments: { text: "unaffected" } },
      ],
      "mcp:huge",
    );
    expect(resultFor(results, "call_too_big")).toMatch(/12\.0 MB message, over the 10\.0 MB limit/);
    expect(resultFor(results, "call_echo3")).toBe("echo: unaffected");
    figures.errorResults++;
    figures.healthyCalls++;
    // The next call on the same server is answered by the same process: no reconnect happened.
    const again = await turnCalling([{ id: "call_inv_again", name: "mcp_invalid_echo", arguments: { text: "again" } }], "mcp:huge");
    expect(resultFor(again.results, "call_inv_again")).toBe("echo: again");
    expect(manager.connection("invalid")?.pid).toBe(pidBefore);
    expect(fx.logs.some((l) => l.msg === "MCP server disconnected" && l.data?.server === "invalid")).toBe(false);
  });

  it("after all of that the healthy server still answers", async () => {
    const { results } = await turnCalling([{ id: "call_last", name: "mcp_healthy_echo", arguments: { text: "last" } }], "mcp:final");
    expect(resultFor(results, "call_last")).toBe("echo: last");
    figures.healthyCalls++;
  });
});
