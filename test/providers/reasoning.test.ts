import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { toolMessage, userMessage } from "../../src/core/message-helpers.js";
import type { AssistantMessage, Message, ReasoningPart } from "../../src/core/messages.js";
import { adapterFor } from "../../src/providers/adapters.js";
import { toAnthropicMessages } from "../../src/providers/anthropic-messages.js";
import { ThinkSplitter } from "../../src/providers/think-splitter.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { fixtureStep } from "../fakes/fixture-step.js";
import { ask, collect, deltas, targetFor, weatherTool } from "./helpers.js";

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
});

/** First turn: reasoning + a tool call; second turn: the history goes back to the server. */
async function roundTrip(api: "chat" | "responses" | "anthropic", signature: string): Promise<{ first: AssistantMessage; body: Record<string, unknown> }> {
  fake.enqueue(
    { reasoning: "I should check the weather.", reasoningSignature: signature, toolCalls: [{ id: "call_1", name: "get_weather", arguments: { city: "Paris" } }] },
    { text: "It is sunny." },
  );
  const target = targetFor(fake, api);
  const request = ask("weather in Paris?", { tools: [weatherTool], reasoningEffort: "low", maxTokens: 4096 });
  const first = await collect(adapterFor(api)(target, request));
  expect(deltas(first.events, "reasoning_delta")).toBe("I should check the weather.");
  const message = first.response?.message as AssistantMessage;
  const history: Message[] = [...request.messages, message, toolMessage("call_1", "get_weather", "sunny")];
  const second = await collect(adapterFor(api)(target, { ...request, messages: history }));
  expect(second.response?.message.content).toEqual([{ type: "text", text: "It is sunny." }]);
  return { first: message, body: fake.requests[1]?.body ?? {} };
}

describe("reasoning round-trip", () => {
  it("anthropic: the thinking block and its signature go back unchanged", async () => {
    const { first, body } = await roundTrip("anthropic", "sig-abc-123");
    expect(first.content[0]).toMatchObject({ type: "reasoning", text: "I should check the weather.", signature: "sig-abc-123" });
    const messages = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(messages[1]?.content[0]).toEqual({ type: "thinking", thinking: "I should check the weather.", signature: "sig-abc-123" });
    expect(messages[1]?.content[1]).toMatchObject({ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } });
    expect(messages[2]?.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "call_1", content: [{ type: "text", text: "sunny" }] });
    expect(fake.requests[0]?.body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
  });

  it("responses: the reasoning item (with encrypted content) is sent back with store:false", async () => {
    const { first, body } = await roundTrip("responses", "enc-xyz");
    const reasoning = first.content[0] as ReasoningPart;
    expect(reasoning.providerData).toMatchObject({ type: "reasoning", encrypted_content: "enc-xyz" });
    expect(body.store).toBe(false);
    expect(body.include).toEqual(["reasoning.encrypted_content"]);
    const input = body.input as Array<Record<string, unknown>>;
    expect(input[1]).toMatchObject({ type: "reasoning", encrypted_content: "enc-xyz", id: reasoning.providerData?.id });
    expect(input[2]).toEqual({ type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Paris"}' });
    expect(input[3]).toEqual({ type: "function_call_output", call_id: "call_1", output: "sunny" });
  });

  it("chat: reasoning_content is separated from text and replayed on the assistant message", async () => {
    const { first, body } = await roundTrip("chat", "unused");
    expect(first.content[0]).toMatchObject({ type: "reasoning", text: "I should check the weather." });
    const messages = body.messages as Array<Record<string, unknown>>;
    expect(messages[1]).toMatchObject({ role: "assistant", content: null, reasoning_content: "I should check the weather." });
  });

  it("reasoning from another provider is not replayed", async () => {
    fake.enqueue({ text: "ok" });
    const foreign: AssistantMessage = {
      id: "m1",
      role: "assistant",
      provider: "someone-else",
      content: [{ type: "reasoning", text: "secret", signature: "theirs" }, { type: "text", text: "hello" }],
    };
    await collect(adapterFor("anthropic")(targetFor(fake, "anthropic"), { messages: [userMessage("a"), foreign, userMessage("b")] }));
    const messages = fake.requests[0]?.body.messages as Array<{ content: Array<Record<string, unknown>> }>;
    expect(messages[1]?.content.map((b) => b.type)).toEqual(["text"]);
  });

  it("anthropic: redacted thinking is replayed as redacted_thinking with its data", () => {
    const message: AssistantMessage = {
      id: "m",
      role: "assistant",
      content: [{ type: "reasoning", text: "", redacted: true, providerData: { data: "opaque-blob" } }, { type: "text", text: "hi" }],
    };
    const { messages } = toAnthropicMessages([userMessage("a"), message], targetFor(fake, "anthropic"));
    expect(messages[1]?.content[0]).toEqual({ type: "redacted_thinking", data: "opaque-blob" });
  });

  it("replays the recorded Anthropic thinking stream (signature kept)", async () => {
    fake.enqueue(fixtureStep("anthropic-messages-stream-thinking.chunks.jsonl"));
    const { response } = await collect(adapterFor("anthropic")(targetFor(fake, "anthropic"), ask("x")));
    const part = response?.message.content[0] as ReasoningPart;
    expect(part.type).toBe("reasoning");
    expect(part.text).toContain("The previous result was 925.");
    expect(part.signature?.length).toBeGreaterThan(20);
    expect(response?.message.content.at(-1)?.type).toBe("text");
  });
});

describe("inline <think> tags", () => {
  it("are split out of chat text, even across chunk boundaries", async () => {
    fake.enqueue({ text: "<think>plan the answer</think>The answer is 4.", chunkSize: 3 });
    const { events, response } = await collect(adapterFor("chat")(targetFor(fake, "chat"), ask("2+2")));
    expect(deltas(events, "reasoning_delta")).toBe("plan the answer");
    expect(deltas(events, "text_delta")).toBe("The answer is 4.");
    expect(response?.message.content).toEqual([
      { type: "reasoning", text: "plan the answer" },
      { type: "text", text: "The answer is 4." },
    ]);
  });

  it("ThinkSplitter handles every split point of a tagged string", () => {
    const input = "a<think>b</think>c";
    for (let cut = 0; cut <= input.length; cut++) {
      const s = new ThinkSplitter();
      const pieces = [...s.push(input.slice(0, cut)), ...s.push(input.slice(cut)), ...s.flush()];
      const text = pieces.filter((p) => p.kind === "text").map((p) => p.text).join("");
      const reasoning = pieces.filter((p) => p.kind === "reasoning").map((p) => p.text).join("");
      expect([text, reasoning]).toEqual(["ac", "b"]);
    }
  });

  it("a lone '<' that is not a tag is released", () => {
    const s = new ThinkSplitter();
    expect([...s.push("a <"), ...s.push(" b")].map((p) => p.text).join("")).toBe("a < b");
    expect(s.flush()).toEqual([]);
  });
});
