import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ContextOverflowError, ProviderError } from "../../src/core/errors.js";
import { toolMessage } from "../../src/core/message-helpers.js";
import type { AssistantMessage } from "../../src/core/messages.js";
import { adapterFor } from "../../src/providers/adapters.js";
import type { WireApi } from "../../src/providers/types.js";
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

const APIS: WireApi[] = ["chat", "responses", "anthropic"];

describe.each(APIS)("%s adapter", (api) => {
  const run = (request = ask("hi"), extra = {}) => collect(adapterFor(api)(targetFor(fake, api, extra), request));

  it("streams text deltas and reports usage incl. cached tokens", async () => {
    fake.enqueue({ text: "Hello there, friend", usage: { promptTokens: 50, completionTokens: 7, cachedTokens: 20 } });
    const { events, response } = await run();
    expect(deltas(events, "text_delta")).toBe("Hello there, friend");
    expect(events.filter((e) => e.type === "text_delta").length).toBeGreaterThan(1);
    expect(events[0]).toEqual({ type: "start", provider: targetFor(fake, api).provider, model: targetFor(fake, api).model });
    expect(response?.finishReason).toBe("stop");
    expect(response?.message.content).toEqual([{ type: "text", text: "Hello there, friend" }]);
    expect(response?.usage).toMatchObject({ promptTokens: 50, completionTokens: 7, cachedTokens: 20 });
    expect(fake.requests[0]?.stream).toBe(true);
    fake.assertDone();
  });

  it("assembles parallel tool calls and sends the results back", async () => {
    fake.enqueue(
      {
        toolCalls: [
          { id: "call_a", name: "get_weather", arguments: { city: "Paris" } },
          { id: "call_b", name: "get_weather", arguments: { city: "Oslo" } },
        ],
      },
      { text: "Sunny in both" },
    );
    const first = await run(ask("weather?", { tools: [weatherTool] }));
    expect(first.response?.finishReason).toBe("tool_calls");
    const calls = first.events.filter((e) => e.type === "tool_call").map((e) => (e.type === "tool_call" ? e.toolCall : undefined));
    expect(calls.map((c) => [c?.id, c?.name, c?.arguments])).toEqual([
      ["call_a", "get_weather", { city: "Paris" }],
      ["call_b", "get_weather", { city: "Oslo" }],
    ]);
    const assistant = first.response?.message as AssistantMessage;
    const history = [...ask("weather?").messages, assistant, toolMessage("call_a", "get_weather", "20C"), toolMessage("call_b", "get_weather", "5C")];
    const second = await run({ messages: history, tools: [weatherTool] });
    expect(second.response?.message.content).toEqual([{ type: "text", text: "Sunny in both" }]);
    const body = JSON.stringify(fake.requests[1]?.body);
    expect(body).toContain("call_a");
    expect(body).toContain("20C");
    expect(body).toContain("call_b");
    fake.assertDone();
  });

  it("repairs near-JSON arguments and flags unrepairable ones", async () => {
    fake.enqueue({
      toolCalls: [
        { id: "c1", name: "get_weather", arguments: "{'city': 'Rome',}" },
        { id: "c2", name: "get_weather", arguments: "{{{{not json at all::" },
      ],
    });
    const { response } = await run(ask("x", { tools: [weatherTool] }));
    const calls = response?.message.content.filter((p) => p.type === "toolCall");
    expect(calls?.[0]).toMatchObject({ arguments: { city: "Rome" }, rawArguments: "{'city': 'Rome',}" });
    expect(calls?.[0]).not.toHaveProperty("parseError");
    expect(calls?.[1]?.type === "toolCall" && calls[1].parseError).toMatch(/invalid JSON/);
  });

  it("maps a length stop to finishReason length", async () => {
    fake.enqueue({ text: '{"', finishReason: "length" });
    const { response } = await run();
    expect(response?.finishReason).toBe("length");
  });

  it("abort cancels the HTTP request and rejects with AbortedError", async () => {
    fake.enqueue({ text: "one two three four five six", chunkDelayMs: 300 });
    const controller = new AbortController();
    const stream = adapterFor(api)(targetFor(fake, api), ask("hi"), controller.signal);
    const seen: string[] = [];
    for await (const e of stream) {
      seen.push(e.type);
      if (e.type === "text_delta") controller.abort();
    }
    await expect(stream.result()).rejects.toMatchObject({ code: "aborted" });
    expect(seen.at(-1)).toBe("error");
    // Nothing after the abort: the rest of the body was never read.
    expect(seen.filter((t) => t === "text_delta")).toHaveLength(1);
  });

  it("times out a stalled stream as stream_stalled", async () => {
    fake.enqueue({ text: "one two three", fault: { type: "stall", afterChunks: 2 } });
    const { error } = await run(ask("hi"), { idleTimeoutMs: 150 });
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: "stream_stalled", retryable: true });
  });

  it("a cut connection is a retryable connection error", async () => {
    fake.enqueue({ kind: "hangup" });
    const { error } = await run();
    expect(error).toMatchObject({ kind: "connection", retryable: true });
  });
});

describe("error bodies", () => {
  it("OpenAI 400 context_length_exceeded → ContextOverflowError", async () => {
    fake.enqueue(fixtureStep("openai-error-400-context-length-exceeded.json"));
    const { error } = await collect(adapterFor("chat")(targetFor(fake, "chat"), ask("x")));
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect(error).toMatchObject({ status: 400, retryable: false, providerCode: "context_length_exceeded" });
  });

  it("OpenAI 429 rate limit → rate_limit with retry-after from the message", async () => {
    fake.enqueue(fixtureStep("openai-error-429-rate-limit-exceeded.json"));
    const { error } = await collect(adapterFor("chat")(targetFor(fake, "chat"), ask("x")));
    expect(error).toMatchObject({ kind: "rate_limit", status: 429, retryable: true, retryAfterSeconds: 0.006 });
  });

  it("OpenAI 500 server_error → server, retryable", async () => {
    fake.enqueue(fixtureStep("openai-error-500-server-error.json"));
    const { error } = await collect(adapterFor("responses")(targetFor(fake, "responses"), ask("x")));
    expect(error).toMatchObject({ kind: "server", status: 500, retryable: true });
  });

  it("Anthropic 529 overloaded → overloaded, retryable", async () => {
    fake.enqueue(fixtureStep("anthropic-error-529-overloaded.json"));
    const { error, events } = await collect(adapterFor("anthropic")(targetFor(fake, "anthropic"), ask("x")));
    expect(error).toMatchObject({ kind: "overloaded", status: 529, retryable: true, providerCode: "overloaded_error" });
    expect(events.at(-1)).toMatchObject({ type: "error" });
  });

  it("Anthropic 400 'prompt is too long' → ContextOverflowError", async () => {
    fake.enqueue({
      kind: "error",
      status: 400,
      body: { type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 210000 tokens > 200000 maximum" } },
    });
    const { error } = await collect(adapterFor("anthropic")(targetFor(fake, "anthropic"), ask("x")));
    expect(error).toBeInstanceOf(ContextOverflowError);
  });

  it("429 insufficient_quota → quota, never retryable", async () => {
    fake.enqueue({
      kind: "error",
      status: 429,
      body: { error: { message: "You exceeded your current quota", type: "insufficient_quota", param: null, code: "insufficient_quota" } },
    });
    const { error } = await collect(adapterFor("chat")(targetFor(fake, "chat"), ask("x")));
    expect(error).toMatchObject({ kind: "quota", retryable: false });
  });

  it("401 → auth; Retry-After header is read", async () => {
    fake.enqueue(
      { kind: "error", status: 401, body: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } },
      { kind: "error", status: 503, body: "upstream down", headers: { "retry-after": "7" } },
    );
    const first = await collect(adapterFor("anthropic")(targetFor(fake, "anthropic"), ask("x")));
    expect(first.error).toMatchObject({ kind: "auth", status: 401, retryable: false });
    const second = await collect(adapterFor("chat")(targetFor(fake, "chat"), ask("x")));
    expect(second.error).toMatchObject({ kind: "server", status: 503, retryAfterSeconds: 7 });
  });
});
