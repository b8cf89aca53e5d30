import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistantMessage, textOf, userMessage } from "../../src/core/message-helpers.js";
import { runAgent, type AgentHooks, type Clock } from "../../src/engine/index.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { collect, makeModel, textTool, wireMessages } from "./helpers/harness.js";

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
});

const echo = textTool("echo", (args) => `echo ${String(args.text)}`, {
  readOnly: true,
  parameters: { type: "object", properties: { text: { type: "string" } } },
});

describe("hooks: before iteration", () => {
  it("can answer without calling the model", async () => {
    const hooks: AgentHooks = {
      beforeIteration: () => ({
        response: { message: assistantMessage("from cache"), finishReason: "stop", usage: { promptTokens: 0, completionTokens: 0 }, provider: "x", model: "y" },
      }),
    };
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")], hooks }));
    expect(result.content).toBe("from cache");
    expect(fake.requests).toHaveLength(0);
  });

  it("can replace the request", async () => {
    fake.enqueue({ text: "ok" });
    const hooks: AgentHooks = {
      beforeIteration: (_ctx, request) => ({ request: { ...request, messages: [...request.messages, userMessage("added by hook")] } }),
    };
    await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")], hooks }));
    expect(wireMessages(fake.requests[0]).map((m) => m.content)).toEqual(["q", "added by hook"]);
  });
});

describe("hooks: after response", () => {
  it("can replace the response", async () => {
    fake.enqueue({ text: "raw" });
    const hooks: AgentHooks = { afterResponse: (_ctx, response) => ({ ...response, message: assistantMessage("edited") }) };
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")], hooks }));
    expect(result.content).toBe("edited");
  });
});

describe("hooks: tool calls", () => {
  it("blocks a call with a reason the model sees", async () => {
    fake.enqueue({ toolCalls: [{ name: "echo", arguments: { text: "hi" } }] }, { text: "ok" });
    const hooks: AgentHooks = { beforeToolCall: () => ({ block: "not allowed today" }) };
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")], tools: [echo], hooks }));
    const tool = result.newMessages.find((m) => m.role === "tool")!;
    expect(textOf(tool)).toBe("Error: the call to 'echo' was blocked: not allowed today");
  });

  it("rewrites arguments before and results after", async () => {
    fake.enqueue({ toolCalls: [{ name: "echo", arguments: { text: "hi" } }] }, { text: "ok" });
    const hooks: AgentHooks = {
      beforeToolCall: (_ctx, call) => ({ arguments: { text: `${String(call.arguments.text)}!` } }),
      afterToolCall: (_ctx, _call, result) => ({ ...result, content: [{ type: "text", text: `${textOf(result)} (checked)` }] }),
    };
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")], tools: [echo], hooks }));
    expect(textOf(result.newMessages.find((m) => m.role === "tool")!)).toBe("echo hi! (checked)");
  });
});

describe("hooks: isolation", () => {
  it("reports a throwing hook as a warning and carries on", async () => {
    fake.enqueue({ text: "fine" });
    const seen: string[] = [];
    const hooks: AgentHooks[] = [
      {
        beforeRun: () => {
          throw new Error("hook exploded");
        },
        onStreamDelta: () => {
          throw new Error("delta exploded");
        },
      },
      { onStreamDelta: (_ctx, d) => void seen.push(d.delta), afterRun: (_ctx, r) => void seen.push(`after:${r.stopReason}`) },
    ];
    const { result, events } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")], hooks }));
    expect(result.content).toBe("fine");
    const warnings = events.filter((e) => e.type === "warning").map((e) => (e.type === "warning" ? e.message : ""));
    expect(warnings.some((w) => w.includes("hook exploded"))).toBe(true);
    expect(warnings.some((w) => w.includes("delta exploded"))).toBe(true);
    expect(seen.join("")).toContain("fine");
    expect(seen.at(-1)).toBe("after:completed");
  });

  it("skips a hook that never settles", async () => {
    fake.enqueue({ text: "fine" });
    // A clock whose timers fire at once: the hook timeout elapses without real waiting.
    const clock: Clock = { now: () => 0, setTimeout: (cb) => setImmediate(cb), clearTimeout: (h) => clearImmediate(h as NodeJS.Immediate) };
    const hooks: AgentHooks = { beforeIteration: () => new Promise<void>(() => undefined) };
    const { result, events } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")], hooks, clock }));
    expect(result.content).toBe("fine");
    expect(events.some((e) => e.type === "warning" && e.message.includes("beforeIteration did not finish"))).toBe(true);
  });

  it("calls onError when the provider fails", async () => {
    fake.enqueue({ kind: "error", status: 401, body: { error: { message: "bad key", type: "invalid_request_error", code: "invalid_api_key" } } });
    const errors: unknown[] = [];
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")], hooks: { onError: (_c, e) => void errors.push(e) } }));
    expect(result.stopReason).toBe("error");
    expect(errors).toHaveLength(1);
    expect(result.error).toBe(errors[0]);
  });
});
