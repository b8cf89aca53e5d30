import type { RawMessageStreamEvent } from "@anthropic-ai/sdk/resources/messages";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FakeLLM, FakeReply } from "./fake-llm-types.js";
import { startFakeLLM } from "./fake-llm.js";
import { readLlmFixture } from "./fixture-step.js";
import { ANTHROPIC_REQUEST, anthropicFor, collect } from "./sdk-helpers.js";

/** Wire fidelity, part 2 (Anthropic Messages): the fake's own events through @anthropic-ai/sdk. */

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  fake.assertDone();
  await fake.close();
});

const FULL: FakeReply = {
  reasoning: "Two cities, two calls.",
  reasoningSignature: "EqQBsig",
  text: "Let me check both.",
  toolCalls: [
    { id: "toolu_paris", name: "get_weather", arguments: { city: "Paris" } },
    { name: "get_weather", arguments: { city: "Lyon" } },
  ],
  usage: { promptTokens: 300, completionTokens: 45, cachedTokens: 256 },
};

describe("anthropic: streamed", () => {
  it("thinking with signature, text and two tool_use blocks assemble via messages.stream().finalMessage()", async () => {
    fake.enqueue(FULL);
    const message = await anthropicFor(fake).messages.stream(ANTHROPIC_REQUEST).finalMessage();
    expect(message.content).toEqual([
      { type: "thinking", thinking: "Two cities, two calls.", signature: "EqQBsig" },
      { type: "text", text: "Let me check both." },
      { type: "tool_use", id: "toolu_paris", name: "get_weather", input: { city: "Paris" } },
      { type: "tool_use", id: expect.stringMatching(/^toolu_/) as unknown as string, name: "get_weather", input: { city: "Lyon" } },
    ]);
    expect(message.stop_reason).toBe("tool_use");
    // Anthropic counts cache reads apart from input_tokens.
    expect(message.usage).toMatchObject({ input_tokens: 44, cache_read_input_tokens: 256, output_tokens: 45 });
  });

  it("frames: message_start, ping, deltas (input_json_delta starts with \"\"), message_delta, message_stop", async () => {
    fake.enqueue({ toolCalls: [{ name: "ls", arguments: {} }], usage: { completionTokens: 9 } });
    const events: RawMessageStreamEvent[] = await collect(await anthropicFor(fake).messages.create({ ...ANTHROPIC_REQUEST, stream: true }));
    expect(events.map((e) => (e.type === "content_block_delta" ? `${e.type}:${e.delta.type}` : e.type))).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta:input_json_delta",
      "content_block_delta:input_json_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const partials = events.flatMap((e) => (e.type === "content_block_delta" && e.delta.type === "input_json_delta" ? [e.delta.partial_json] : []));
    expect(partials).toEqual(["", "{}"]);
    const delta = events.find((e) => e.type === "message_delta");
    expect(delta?.type === "message_delta" && delta.usage.output_tokens).toBe(9);
  });

  it("sends a ping event on the wire after the first block opens", async () => {
    fake.enqueue({ text: "Hi" });
    const res = await fetch(`${fake.anthropicBaseURL}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...ANTHROPIC_REQUEST, stream: true }),
    });
    const names = (await res.text()).split("\n").filter((l) => l.startsWith("event: ")).map((l) => l.slice(7));
    expect(names).toEqual([
      "message_start",
      "content_block_start",
      "ping",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
  });

  it("text then tool_use has the same event order as the recorded anthropic-messages-stream-text-then-tool-use.sse", async () => {
    fake.enqueue({ text: "I'll check the current weather in Paris for you.", toolCalls: [{ name: "get_weather", arguments: { location: "Paris" } }] });
    const res = await fetch(`${fake.anthropicBaseURL}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...ANTHROPIC_REQUEST, stream: true }),
    });
    /** Event name plus delta type, with repeats (delta fragments) collapsed. */
    const order = (sse: string): string[] => {
      const names = sse
        .split("\n")
        .filter((l) => l.startsWith("data: "))
        .map((l) => JSON.parse(l.slice(6)) as { type: string; delta?: { type?: string } })
        .map((e) => (e.type === "content_block_delta" ? `${e.type}:${e.delta?.type ?? ""}` : e.type));
      return names.filter((n, i) => n !== names[i - 1]);
    };
    expect(order(await res.text())).toEqual(order(readLlmFixture("anthropic-messages-stream-text-then-tool-use.sse")));
  });

  it("a length stop is stop_reason max_tokens; text streams as text_delta", async () => {
    fake.enqueue({ text: "The answer is", finishReason: "length" });
    const stream = anthropicFor(fake).messages.stream(ANTHROPIC_REQUEST);
    const pieces: string[] = [];
    stream.on("text", (t) => pieces.push(t));
    const message = await stream.finalMessage();
    expect(pieces).toEqual(["The", " answer", " is"]);
    expect(message.stop_reason).toBe("max_tokens");
  });
});

describe("anthropic: non-streamed", () => {
  it("returns the same blocks, stop reason and usage", async () => {
    fake.enqueue(FULL);
    const message = await anthropicFor(fake).messages.create(ANTHROPIC_REQUEST);
    expect(message.model).toBe("claude-sonnet-4-5");
    expect(message.content.map((b) => b.type)).toEqual(["thinking", "text", "tool_use", "tool_use"]);
    expect(message.content[0]).toEqual({ type: "thinking", thinking: "Two cities, two calls.", signature: "EqQBsig" });
    expect(message.content[2]).toEqual({ type: "tool_use", id: "toolu_paris", name: "get_weather", input: { city: "Paris" } });
    expect(message.stop_reason).toBe("tool_use");
    expect(message.usage).toMatchObject({ input_tokens: 44, cache_read_input_tokens: 256, output_tokens: 45 });
  });

  it("a length stop is max_tokens", async () => {
    fake.enqueue({ text: "cut", finishReason: "length" });
    const message = await anthropicFor(fake).messages.create(ANTHROPIC_REQUEST);
    expect(message.stop_reason).toBe("max_tokens");
    expect(message.content).toEqual([{ type: "text", text: "cut" }]);
  });
});
