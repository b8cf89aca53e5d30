import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { userMessage } from "../../src/core/message-helpers.js";
import type { Message } from "../../src/core/messages.js";
import { runAgent } from "../../src/engine/index.js";
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

const echo = textTool("echo", (args) => `echo ${String(args.text ?? "")}`, { readOnly: true, parameters: { type: "object", properties: { text: { type: "string" } } } });

describe("injections: at most 5 drain cycles", () => {
  it("makes 6 LLM calls when every drain returns one message for the first 5 drains", async () => {
    fake.enqueue(...[1, 2, 3, 4, 5, 6].map((n) => ({ text: `answer ${n}` })));
    let drains = 0;
    const drainInjections = (): Message[] => {
      drains++;
      return drains <= 5 ? [userMessage(`injected ${drains}`)] : [];
    };
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("start")], drainInjections }));
    expect(fake.requests).toHaveLength(6);
    expect(result.stopReason).toBe("completed");
    expect(result.content).toBe("answer 6");
    const injected = result.newMessages.filter((m) => m.meta?.injected === true);
    expect(injected).toHaveLength(5);
    // The 6th request carries the 5th injected message after the 5th answer.
    const last = wireMessages(fake.requests[5]).slice(-2);
    expect(last).toEqual([
      { role: "assistant", content: "answer 5" },
      { role: "user", content: "injected 5" },
    ]);
    fake.assertDone();
  });

  it("takes at most 3 messages per drain and delivers the rest on the next one", async () => {
    fake.enqueue({ text: "one" }, { text: "two" }, { text: "three" });
    let first = true;
    const drainInjections = (): Message[] => {
      if (!first) return [];
      first = false;
      return ["a", "b", "c", "d"].map((t) => userMessage(t));
    };
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("go")], drainInjections }));
    expect(fake.requests).toHaveLength(3);
    // The three injected messages arrive as one user turn (roles alternate for every provider).
    expect(wireMessages(fake.requests[1]).slice(-2).map((m) => m.content)).toEqual(["one", "a\n\nb\n\nc"]);
    expect(wireMessages(fake.requests[2]).slice(-2).map((m) => m.content)).toEqual(["two", "d"]);
    expect(result.content).toBe("three");
    fake.assertDone();
  });
});

describe("blank answers: one silent retry, then a no-tools request", () => {
  it("returns the third reply and sends the third request without tools", async () => {
    fake.enqueue({ text: "" }, { text: "   " }, { text: "final answer" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")], tools: [echo] }));
    expect(result.content).toBe("final answer");
    expect(result.stopReason).toBe("completed");
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests[0]?.body.tools).toBeDefined();
    expect(fake.requests[1]?.body.tools).toBeDefined();
    expect(fake.requests[2]?.body.tools).toBeUndefined();
    // The silent retry sends the same conversation again.
    expect(wireMessages(fake.requests[1])).toEqual(wireMessages(fake.requests[0]));
  });

  it("stops with empty_final_response when the no-tools request is blank too", async () => {
    fake.enqueue({ text: "" }, { text: "" }, { text: "" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")] }));
    expect(result.stopReason).toBe("empty_final_response");
    expect(result.content).toBe("");
    fake.assertDone();
  });
});

describe("finish_reason length: up to 3 continuations", () => {
  it("concatenates the pieces into one answer", async () => {
    fake.enqueue(
      { text: "first ", finishReason: "length" },
      { text: "second ", finishReason: "length" },
      { text: "third", finishReason: "stop" },
    );
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("write")] }));
    expect(result.content).toBe("first second third");
    expect(result.stopReason).toBe("completed");
    // One assistant message in the history, not three fragments.
    const assistants = result.newMessages.filter((m) => m.role === "assistant");
    expect(assistants).toHaveLength(1);
    // The continuation request replays the partial answer so far.
    const tail = wireMessages(fake.requests[2]).slice(-2);
    expect(tail[0]).toEqual({ role: "assistant", content: "first second " });
  });

  it("gives up after 3 continuations with stop reason length", async () => {
    fake.enqueue(...["a", "b", "c", "d"].map((text) => ({ text, finishReason: "length" as const })));
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("write")] }));
    expect(fake.requests).toHaveLength(4);
    expect(result.stopReason).toBe("length");
    expect(result.content).toBe("abcd");
  });
});

describe("maxToolIterations: one no-tools finalization", () => {
  it("runs tools twice, sends the 3rd request without tools and stops with max_iterations", async () => {
    let runs = 0;
    const tool = textTool("echo", () => `run ${++runs}`, { readOnly: true });
    fake.enqueue(
      { toolCalls: [{ name: "echo", arguments: {} }] },
      { toolCalls: [{ name: "echo", arguments: {} }] },
      { text: "best effort" },
    );
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("loop")], tools: [tool], maxToolIterations: 2 }));
    expect(runs).toBe(2);
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests[2]?.body.tools).toBeUndefined();
    expect(result.stopReason).toBe("max_iterations");
    expect(result.content).toBe("best effort");
    fake.assertDone();
  });
});

describe("maxToolIterations counts model calls (Python's max_iterations)", () => {
  it("a silent retry of an empty answer uses up an iteration: the 3rd request is the no-tools finalization", async () => {
    fake.enqueue({ toolCalls: [{ name: "echo", arguments: { text: "x" } }] }, { text: "" }, { text: "wrapped up" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")], tools: [echo], maxToolIterations: 2 }));
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests[1]?.body.tools).toBeDefined();
    // One tool round only, yet two model calls: the limit is reached.
    expect(fake.requests[2]?.body.tools).toBeUndefined();
    expect(result.stopReason).toBe("max_iterations");
    expect(result.content).toBe("wrapped up");
    fake.assertDone();
  });

  it("length continuations count too", async () => {
    fake.enqueue({ text: "part one ", finishReason: "length" }, { text: "rest" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")], tools: [echo], maxToolIterations: 1 }));
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.body.tools).toBeUndefined();
    // The cut answer so far goes along, so the wrap-up can build on it.
    expect(wireMessages(fake.requests[1]).at(-2)).toEqual({ role: "assistant", content: "part one " });
    expect(result.stopReason).toBe("max_iterations");
    fake.assertDone();
  });
});

describe("toolChoice applies to round 1 only", () => {
  it("sends tool_choice=required on the first request and not on the second", async () => {
    fake.enqueue({ toolCalls: [{ name: "echo", arguments: { text: "x" } }] }, { text: "ok" });
    await collect(runAgent({ model: makeModel(fake), messages: [userMessage("q")], tools: [echo], toolChoice: "required" }));
    expect(fake.requests[0]?.body.tool_choice).toBe("required");
    expect(fake.requests[1]?.body.tools).toBeDefined();
    expect(fake.requests[1]?.body.tool_choice).toBeUndefined();
  });
});

describe("checkpoints", () => {
  it("emits awaiting_tools, tools_completed and final_response in order", async () => {
    fake.enqueue({ toolCalls: [{ name: "echo", arguments: { text: "x" } }] }, { text: "ok" });
    const phases: string[] = [];
    const { events } = await collect(
      runAgent({ model: makeModel(fake), messages: [userMessage("q")], tools: [echo], onCheckpoint: (cp) => void phases.push(cp.phase) }),
    );
    expect(phases).toEqual(["awaiting_tools", "tools_completed", "final_response"]);
    expect(events.filter((e) => e.type === "checkpoint")).toHaveLength(3);
  });
});

describe("abort during a slow tool", () => {
  it("stops with aborted and gives the pending call an interrupted result", async () => {
    fake.enqueue({ toolCalls: [{ name: "fast", arguments: {} }, { name: "slow", arguments: {} }] });
    const controller = new AbortController();
    const fast = textTool("fast", () => "fast done", { readOnly: true });
    // Ignores its signal on purpose: the engine must not wait for it.
    const slow = textTool("slow", () => {
      controller.abort();
      return new Promise<string>(() => undefined);
    });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("go")], tools: [fast, slow] }, controller.signal));
    expect(result.stopReason).toBe("aborted");
    const tools = result.newMessages.filter((m) => m.role === "tool");
    expect(tools.map((m) => (m.content[0] as { text: string }).text)).toEqual([
      "fast done",
      "Error: Task interrupted before this tool finished.",
    ]);
    expect(fake.requests).toHaveLength(1);
  });
});

describe("abort during the model call", () => {
  it("stops with aborted without waiting for the response", async () => {
    fake.enqueue({ text: "too late", delayMs: 10_000 });
    const controller = new AbortController();
    const stream = runAgent({ model: makeModel(fake), messages: [userMessage("go")] }, controller.signal);
    stream.subscribe((event) => {
      if (event.type === "llm_request") controller.abort();
    });
    const { result } = await collect(stream);
    expect(result.stopReason).toBe("aborted");
    expect(result.newMessages).toEqual([]);
  });
});
