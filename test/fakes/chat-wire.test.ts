import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FakeLLM, FakeReply } from "./fake-llm-types.js";
import { startFakeLLM } from "./fake-llm.js";
import { readLlmFixture } from "./fixture-step.js";
import { CHAT_REQUEST, assembleChat, openaiFor } from "./sdk-helpers.js";

/** Wire fidelity, part 2 (Chat Completions): the fake's own frames, parsed by the openai SDK. */

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  fake.assertDone();
  await fake.close();
});

const TWO_CALLS: FakeReply = {
  toolCalls: [
    { id: "call_weather", name: "get_weather", arguments: { city: "Paris", units: "c" } },
    { name: "get_time", arguments: '{"tz": "Europe/Paris"}' },
  ],
  usage: { promptTokens: 120, completionTokens: 40, cachedTokens: 64 },
};

async function streamed(reply: FakeReply, includeUsage = true): ReturnType<typeof assembleChat> {
  fake.enqueue(reply);
  const stream = await openaiFor(fake).chat.completions.create({
    ...CHAT_REQUEST,
    stream: true,
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
  });
  return assembleChat(stream);
}

describe("chat: streamed replies", () => {
  it("text arrives as word deltas after a role delta, ending with stop", async () => {
    const got = await streamed({ text: "Hello there, Paris is sunny." });
    expect(got.role).toBe("assistant");
    expect(got.text).toBe("Hello there, Paris is sunny.");
    expect(got.chunks.slice(1, 4).map((c) => c.choices[0]?.delta.content)).toEqual(["Hello", " there,", " Paris"]);
    expect(got.finishReason).toBe("stop");
  });

  it("two parallel tool calls: ids, names and argument strings per index", async () => {
    const got = await streamed(TWO_CALLS);
    expect(got.toolCalls).toEqual([
      { id: "call_weather", name: "get_weather", arguments: '{"city":"Paris","units":"c"}' },
      { id: expect.stringMatching(/^call_/) as unknown as string, name: "get_time", arguments: '{"tz": "Europe/Paris"}' },
    ]);
    expect(got.finishReason).toBe("tool_calls");
  });

  it("usage (with cached tokens) comes in a last chunk with no choices, only when include_usage is set", async () => {
    const got = await streamed(TWO_CALLS);
    expect(got.chunks.at(-1)?.choices).toEqual([]);
    expect(got.usage).toEqual({
      prompt_tokens: 120,
      completion_tokens: 40,
      total_tokens: 160,
      prompt_tokens_details: { cached_tokens: 64 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    const without = await streamed({ text: "hi" }, false);
    expect(without.usage).toBeUndefined();
  });

  it("reasoning streams as reasoning_content before the answer", async () => {
    const got = await streamed({ reasoning: "The user greets me.", text: "Hi!" });
    expect(got.reasoning).toBe("The user greets me.");
    expect(got.text).toBe("Hi!");
    const firstContent = got.chunks.findIndex((c) => (c.choices[0]?.delta.content ?? "") !== "");
    const lastReasoning = got.chunks.findLastIndex((c) => "reasoning_content" in (c.choices[0]?.delta ?? {}));
    expect(lastReasoning).toBeLessThan(firstContent);
  });

  it("a length stop carries finish_reason length; chunkSize splits text by characters", async () => {
    const got = await streamed({ text: '{"', finishReason: "length", chunkSize: 1 });
    expect(got.chunks.slice(1, 3).map((c) => c.choices[0]?.delta.content)).toEqual(["{", '"']);
    expect(got.finishReason).toBe("length");
  });

  it("the SDK's own accumulator agrees (chat.completions.stream → finalChatCompletion)", async () => {
    fake.enqueue(TWO_CALLS);
    const final = await openaiFor(fake).chat.completions.stream({ ...CHAT_REQUEST, stream_options: { include_usage: true } }).finalChatCompletion();
    const calls = final.choices[0]?.message.tool_calls ?? [];
    expect(calls.map((c) => (c.type === "function" ? c.function.arguments : ""))).toEqual(['{"city":"Paris","units":"c"}', '{"tz": "Europe/Paris"}']);
    expect(final.usage?.prompt_tokens_details?.cached_tokens).toBe(64);
  });
});

describe("chat: frames have the fixture's shape", () => {
  /** The JSON key paths of one chunk, so `{delta:{tool_calls:[{index,id,…}]}}` compares by shape. */
  function shape(value: unknown, prefix = ""): string[] {
    if (Array.isArray(value)) return value.length === 0 ? [`${prefix}[]`] : value.flatMap((v) => shape(v, `${prefix}[]`));
    if (typeof value === "object" && value !== null) {
      return Object.entries(value).flatMap(([k, v]) => [`${prefix}.${k}`, ...shape(v, `${prefix}.${k}`)]);
    }
    return [];
  }
  /** Shapes in order, with runs of the same shape (argument fragments) collapsed to one. */
  function shapeSequence(sse: string): string[] {
    const shapes = sse
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => line.slice("data: ".length))
      .map((data) => (data === "[DONE]" ? "[DONE]" : shape(JSON.parse(data)).sort().join(" ")));
    return shapes.filter((s, i) => s !== shapes[i - 1]);
  }

  async function generated(reply: FakeReply): Promise<string> {
    fake.enqueue(reply);
    const res = await fetch(`${fake.openaiBaseURL}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...CHAT_REQUEST, stream: true, stream_options: { include_usage: true } }),
    });
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    return res.text();
  }
  // The fixtures' usage has no prompt_tokens_details; ours always reports cached tokens.
  const withoutCacheDetail = (s: string): string => s.replace(/ \.usage\.prompt_tokens_details(\.cached_tokens)?/g, "");

  it("a generated text stream matches openai-chat-stream-text-usage.sse in shape", async () => {
    const ours = await generated({ text: "I'm unable to provide real-time weather updates." });
    expect(shapeSequence(ours).map(withoutCacheDetail)).toEqual(shapeSequence(readLlmFixture("openai-chat-stream-text-usage.sse")));
  });

  it("a generated parallel tool-call stream matches openai-chat-stream-parallel-tool-calls.sse chunk for chunk in shape", async () => {
    const ours = await generated({
      toolCalls: [
        { name: "GetWeatherArgs", arguments: { city: "Edinburgh", country: "GB", units: "c" } },
        { name: "get_stock_price", arguments: { ticker: "AAPL", exchange: "NASDAQ" } },
      ],
    });
    const ourShapes = shapeSequence(ours);
    expect(ourShapes.map(withoutCacheDetail)).toEqual(shapeSequence(readLlmFixture("openai-chat-stream-parallel-tool-calls.sse")));
    expect(ourShapes.length).toBe(8); // role, first+args for 2 calls, finish, usage, [DONE]
    expect(ours.endsWith("data: [DONE]\n\n")).toBe(true);
  });
});

describe("chat: non-streamed replies", () => {
  it("text with usage and cached tokens", async () => {
    fake.enqueue({ text: "Sunny.", usage: { promptTokens: 50, completionTokens: 2, cachedTokens: 32 } });
    const c = await openaiFor(fake).chat.completions.create(CHAT_REQUEST);
    expect(c.object).toBe("chat.completion");
    expect(c.model).toBe("gpt-4o-2024-08-06");
    expect(c.choices[0]?.message).toMatchObject({ role: "assistant", content: "Sunny." });
    expect(c.choices[0]?.finish_reason).toBe("stop");
    expect(c.usage).toMatchObject({ prompt_tokens: 50, completion_tokens: 2, total_tokens: 52, prompt_tokens_details: { cached_tokens: 32 } });
  });

  it("two tool calls: content null, arguments as JSON strings", async () => {
    fake.enqueue(TWO_CALLS);
    const c = await openaiFor(fake).chat.completions.create(CHAT_REQUEST);
    const message = c.choices[0]?.message;
    expect(message?.content).toBeNull();
    expect(message?.tool_calls?.map((t) => (t.type === "function" ? [t.function.name, t.function.arguments] : []))).toEqual([
      ["get_weather", '{"city":"Paris","units":"c"}'],
      ["get_time", '{"tz": "Europe/Paris"}'],
    ]);
    expect(message?.tool_calls?.[0]?.id).toBe("call_weather");
    expect(c.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("reasoning_content and a length stop", async () => {
    fake.enqueue({ reasoning: "Thinking hard.", text: "The answer is", finishReason: "length" });
    const c = await openaiFor(fake).chat.completions.create(CHAT_REQUEST);
    expect((c.choices[0]?.message as unknown as { reasoning_content: string }).reasoning_content).toBe("Thinking hard.");
    expect(c.choices[0]?.finish_reason).toBe("length");
  });
});
