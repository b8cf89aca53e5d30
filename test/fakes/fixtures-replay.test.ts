import { readdirSync } from "node:fs";
import { dirname } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FakeLLM } from "./fake-llm-types.js";
import { startFakeLLM } from "./fake-llm.js";
import { fixtureStep, llmFixturePath } from "./fixture-step.js";
import { ANTHROPIC_REQUEST, CHAT_REQUEST, anthropicFor, assembleChat, openaiFor, rejectionOf } from "./sdk-helpers.js";

/**
 * Wire fidelity, part 1: every recorded fixture replayed byte for byte through the official
 * SDKs. If the SDKs read the recordings as expected from our server, the server's framing
 * (status, headers, chunk boundaries) is faithful too.
 */

const covered = new Set<string>();
function fixture(name: string): string {
  covered.add(name);
  return name;
}

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  fake.assertDone();
  await fake.close();
});

describe("OpenAI chat fixtures through openai.chat.completions.create", () => {
  it("replays a streamed parallel tool-call answer: ids, names and arguments per index, then usage", async () => {
    fake.enqueue(fixtureStep(fixture("openai-chat-stream-parallel-tool-calls.sse")));
    const stream = await openaiFor(fake).chat.completions.create({ ...CHAT_REQUEST, stream: true, stream_options: { include_usage: true } });
    const got = await assembleChat(stream);
    expect(got.role).toBe("assistant");
    expect(got.text).toBe("");
    expect(got.toolCalls).toEqual([
      { id: "call_JMW1whyEaYG438VE1OIflxA2", name: "GetWeatherArgs", arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}' },
      { id: "call_DNYTawLBoN8fj3KN6qU9N1Ou", name: "get_stock_price", arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}' },
    ]);
    expect(got.finishReason).toBe("tool_calls");
    expect(got.usage).toMatchObject({ prompt_tokens: 149, completion_tokens: 60, total_tokens: 209 });
    expect(got.chunks.at(-1)?.choices).toEqual([]);
  });

  it("replays a streamed text answer with a usage-only last chunk", async () => {
    fake.enqueue(fixtureStep(fixture("openai-chat-stream-text-usage.sse")));
    const stream = await openaiFor(fake).chat.completions.create({ ...CHAT_REQUEST, stream: true, stream_options: { include_usage: true } });
    const got = await assembleChat(stream);
    expect(got.text).toBe(
      "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.",
    );
    expect(got.toolCalls).toEqual([]);
    expect(got.finishReason).toBe("stop");
    expect(got.usage).toMatchObject({ prompt_tokens: 14, completion_tokens: 30, total_tokens: 44 });
  });

  it("replays the stream through the SDK's own accumulator (chat.completions.stream)", async () => {
    fake.enqueue(fixtureStep("openai-chat-stream-parallel-tool-calls.sse"));
    const final = await openaiFor(fake).chat.completions.stream({ ...CHAT_REQUEST, stream_options: { include_usage: true } }).finalChatCompletion();
    const calls = final.choices[0]?.message.tool_calls ?? [];
    expect(calls.map((c) => (c.type === "function" ? [c.id, c.function.name] : []))).toEqual([
      ["call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs"],
      ["call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price"],
    ]);
  });

  it("replays a non-streamed parallel tool-call completion (content null, arguments as strings)", async () => {
    fake.enqueue(fixtureStep(fixture("openai-chat-nonstream-parallel-tool-calls.json")));
    const completion = await openaiFor(fake).chat.completions.create(CHAT_REQUEST);
    const message = completion.choices[0]?.message;
    expect(message?.content).toBeNull();
    expect(message?.tool_calls).toEqual([
      { id: "call_fdNz3vOBKYgOIpMdWotB9MjY", type: "function", function: { name: "GetWeatherArgs", arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}' } },
      { id: "call_h1DWI1POMJLb0KwIyQHWXD4p", type: "function", function: { name: "get_stock_price", arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}' } },
    ]);
    expect(completion.choices[0]?.finish_reason).toBe("tool_calls");
    expect(completion.usage).toMatchObject({ prompt_tokens: 149, completion_tokens: 60, total_tokens: 209 });
  });

  it("replays a non-streamed completion cut by max_tokens", async () => {
    fake.enqueue(fixtureStep(fixture("openai-chat-nonstream-finish-length.json")));
    const completion = await openaiFor(fake).chat.completions.create({ ...CHAT_REQUEST, max_tokens: 1 });
    expect(completion.choices[0]?.finish_reason).toBe("length");
    expect(completion.choices[0]?.message.content).toBe('{"');
    expect(completion.usage?.completion_tokens).toBe(1);
  });
});

describe("OpenAI error fixtures through the openai SDK's error classes", () => {
  it("429 rate limit → RateLimitError with code rate_limit_exceeded and the Retry-After header", async () => {
    fake.enqueue(fixtureStep(fixture("openai-error-429-rate-limit-exceeded.json"), { headers: { "retry-after": "2" } }));
    const err = await rejectionOf(openaiFor(fake).chat.completions.create(CHAT_REQUEST));
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const apiErr = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(apiErr.status).toBe(429);
    expect(apiErr.code).toBe("rate_limit_exceeded");
    expect(apiErr.type).toBe("tokens");
    expect(apiErr.headers.get("retry-after")).toBe("2");
    expect(apiErr.message).toContain("Rate limit reached for 10KTPM-200RPM");
  });

  it("400 context length → BadRequestError with code context_length_exceeded", async () => {
    fake.enqueue(fixtureStep(fixture("openai-error-400-context-length-exceeded.json")));
    const err = await rejectionOf(openaiFor(fake).chat.completions.create({ ...CHAT_REQUEST, stream: true }));
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).code).toBe("context_length_exceeded");
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("messages");
  });

  it("500 server error → InternalServerError with type server_error", async () => {
    fake.enqueue(fixtureStep(fixture("openai-error-500-server-error.json")));
    const err = await rejectionOf(openaiFor(fake).responses.create({ model: "gpt-4.1", input: "hi" }));
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(500);
    expect((err as InstanceType<typeof OpenAI.InternalServerError>).type).toBe("server_error");
    expect((err as InstanceType<typeof OpenAI.InternalServerError>).code).toBeNull();
  });
});

describe("Anthropic fixtures through @anthropic-ai/sdk", () => {
  it("replays text then tool_use (.sse without a final blank line): input assembled from partial JSON", async () => {
    fake.enqueue(fixtureStep(fixture("anthropic-messages-stream-text-then-tool-use.sse")));
    const message = await anthropicFor(fake).messages.stream(ANTHROPIC_REQUEST).finalMessage();
    expect(message.content).toEqual([
      { type: "text", text: "I'll check the current weather in Paris for you." },
      { type: "tool_use", id: "toolu_01NRLabsLyVHZPKxbKvkfSMn", name: "get_weather", caller: { type: "direct" }, input: { location: "Paris" } },
    ]);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.usage.input_tokens).toBe(377);
    expect(message.usage.output_tokens).toBe(65);
  });

  it("replays a thinking stream (.chunks.jsonl): thinking text, signature, then text and final usage", async () => {
    fake.enqueue(fixtureStep(fixture("anthropic-messages-stream-thinking.chunks.jsonl")));
    const message = await anthropicFor(fake).messages.stream(ANTHROPIC_REQUEST).finalMessage();
    const [thinking, text] = message.content;
    expect(thinking?.type).toBe("thinking");
    if (thinking?.type !== "thinking") throw new Error("unreachable");
    expect(thinking.thinking).toBe("The previous result was 925. Now I need to divide that by 5.\n\n925 ÷ 5 = 185");
    expect(thinking.signature).toMatch(/^EvQBCkYICxgCKkAxhD4N.*BgB$/);
    expect(text).toMatchObject({ type: "text", text: "925 ÷ 5 = 185" });
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage).toMatchObject({ input_tokens: 69, output_tokens: 53 });
  });

  it("replays a non-streamed thinking + tool_use message", async () => {
    fake.enqueue(fixtureStep(fixture("anthropic-messages-nonstream-thinking-tool-use.json")));
    const message = await anthropicFor(fake).messages.create(ANTHROPIC_REQUEST);
    expect(message.content.map((b) => b.type)).toEqual(["thinking", "tool_use"]);
    const [thinking, tool] = message.content;
    if (thinking?.type !== "thinking" || tool?.type !== "tool_use") throw new Error("unexpected block types");
    expect(thinking.signature.startsWith("Eq4CCpIBCBIYAipAM+SGYGx7")).toBe(true);
    expect(tool).toMatchObject({ id: "toolu_017R7ACrx7NF7sLDDtvdQ1u9", name: "checkSandboxErrors", input: {} });
    expect(message.stop_reason).toBe("tool_use");
    expect(message.usage).toMatchObject({ input_tokens: 599, output_tokens: 59 });
  });

  it("529 overloaded → an APIError with status 529 and error type overloaded_error", async () => {
    fake.enqueue(fixtureStep(fixture("anthropic-error-529-overloaded.json")));
    const err = await rejectionOf(anthropicFor(fake).messages.create(ANTHROPIC_REQUEST));
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    const apiErr = err as InstanceType<typeof Anthropic.InternalServerError>;
    expect(apiErr.status).toBe(529);
    expect(apiErr.type).toBe("overloaded_error");
    expect(apiErr.requestID).toMatch(/^req_fake/);
  });
});

describe("fixture coverage", () => {
  it("every fixture file in the shared folder is replayed above", () => {
    const names = readdirSync(dirname(llmFixturePath("README.md"))).filter((n) => n !== "README.md");
    expect(names.length).toBe(11);
    expect([...covered].sort()).toEqual(names.sort());
  });
});
