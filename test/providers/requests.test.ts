import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistantMessage, systemMessage, toolMessage, userMessage } from "../../src/core/message-helpers.js";
import type { Message } from "../../src/core/messages.js";
import { adapterFor } from "../../src/providers/adapters.js";
import { IMAGE_OMITTED_NOTE, withImageFallback } from "../../src/providers/image-fallback.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { fixtureStep } from "../fakes/fixture-step.js";
import { ask, collect, rawModel, targetFor, weatherTool } from "./helpers.js";

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
});

const schema = { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false };
const PNG = "iVBORw0KGgo=";

describe("structured output requests", () => {
  it("chat sends response_format json_schema strict", async () => {
    fake.enqueue({ text: '{"city":"Oslo"}' });
    await collect(adapterFor("chat")(targetFor(fake, "chat"), ask("x", { output: { name: "place", schema } })));
    expect(fake.requests[0]?.body.response_format).toEqual({ type: "json_schema", json_schema: { name: "place", schema, strict: true } });
  });

  it("responses sends text.format", async () => {
    fake.enqueue({ text: '{"city":"Oslo"}' });
    await collect(adapterFor("responses")(targetFor(fake, "responses"), ask("x", { output: { schema } })));
    expect(fake.requests[0]?.body.text).toEqual({ format: { type: "json_schema", name: "final_answer", schema, strict: true } });
  });

  it("anthropic forces a tool whose input becomes the answer text", async () => {
    fake.enqueue({ toolCalls: [{ id: "toolu_1", name: "final_answer", arguments: { city: "Oslo" } }] });
    const { response } = await collect(adapterFor("anthropic")(targetFor(fake, "anthropic"), ask("x", { output: { schema }, reasoningEffort: "high" })));
    const body = fake.requests[0]?.body ?? {};
    expect(body.tool_choice).toEqual({ type: "tool", name: "final_answer" });
    expect(body.tools).toEqual([{ name: "final_answer", description: expect.any(String), input_schema: schema, cache_control: { type: "ephemeral" } }]);
    expect(body.thinking).toBeUndefined();
    expect(response?.message.content).toEqual([{ type: "text", text: '{"city":"Oslo"}' }]);
    expect(response?.finishReason).toBe("stop");
  });
});

describe("anthropic message shaping", () => {
  it("hoists system, merges same-role turns, puts tool results in user turns and marks cache points", async () => {
    fake.enqueue({ text: "done" });
    const call = { type: "toolCall" as const, id: "t1", name: "get_weather", arguments: { city: "A" }, rawArguments: '{"city":"A"}' };
    const messages: Message[] = [
      systemMessage("be brief"),
      userMessage("first"),
      userMessage("second"),
      assistantMessage("", [call]),
      toolMessage("t1", "get_weather", "cloudy"),
      userMessage("and now?"),
    ];
    await collect(adapterFor("anthropic")(targetFor(fake, "anthropic"), { messages, tools: [weatherTool], temperature: 0.5 }));
    const body = fake.requests[0]?.body ?? {};
    expect(body.system).toEqual([{ type: "text", text: "be brief", cache_control: { type: "ephemeral" } }]);
    expect(body.temperature).toBe(0.5);
    expect((body.tools as Array<Record<string, unknown>>)[0]?.cache_control).toEqual({ type: "ephemeral" });
    const sent = body.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>;
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(sent[0]?.content.map((b) => b.text)).toEqual(["first", "second"]);
    expect(sent[2]?.content.map((b) => b.type)).toEqual(["tool_result", "text"]);
    // The last two turns carry a cache breakpoint on their last block.
    expect(sent[2]?.content[1]?.cache_control).toEqual({ type: "ephemeral" });
    expect(sent[1]?.content[0]?.cache_control).toEqual({ type: "ephemeral" });
    expect(sent[0]?.content[1]?.cache_control).toBeUndefined();
  });

  it("a history starting with the assistant gets a user turn first", async () => {
    fake.enqueue({ text: "ok" });
    await collect(adapterFor("anthropic")(targetFor(fake, "anthropic"), { messages: [assistantMessage("earlier"), userMessage("hi")] }));
    const sent = fake.requests[0]?.body.messages as Array<{ role: string }>;
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
  });
});

describe("images", () => {
  const withImage = () => [userMessage([{ type: "text", text: "what is this?" }, { type: "image", mimeType: "image/png", data: PNG }])];

  it.each([
    ["chat", (b: Record<string, unknown>) => (b.messages as Array<{ content: unknown[] }>)[0]?.content[1], { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }],
    ["responses", (b: Record<string, unknown>) => (b.input as Array<{ content: unknown[] }>)[0]?.content[1], { type: "input_image", image_url: `data:image/png;base64,${PNG}`, detail: "auto" }],
    ["anthropic", (b: Record<string, unknown>) => (b.messages as Array<{ content: unknown[] }>)[0]?.content[1], { type: "image", source: { type: "base64", media_type: "image/png", data: PNG }, cache_control: { type: "ephemeral" } }],
  ] as const)("%s encodes an image part", async (api, pick, expected) => {
    fake.enqueue({ text: "a cat" });
    await collect(adapterFor(api)(targetFor(fake, api), { messages: withImage() }));
    expect(pick(fake.requests[0]?.body ?? {})).toEqual(expected);
  });

  it("a non-transient error with images is retried once without them", async () => {
    fake.enqueue(
      { kind: "error", status: 400, body: { error: { message: "image input not supported", type: "invalid_request_error", param: null, code: null } } },
      { text: "I cannot see images, but…" },
    );
    const { response } = await collect(withImageFallback(rawModel(fake, "chat")).stream({ messages: withImage() }));
    expect(response?.message.content).toEqual([{ type: "text", text: "I cannot see images, but…" }]);
    const second = (fake.requests[1]?.body.messages as Array<{ content: unknown }>)[0]?.content;
    expect(JSON.stringify(second)).not.toContain("image_url");
    expect(JSON.stringify(second)).toContain(IMAGE_OMITTED_NOTE);
  });

  it("the same error without images is not retried", async () => {
    fake.enqueue({ kind: "error", status: 400, body: { error: { message: "bad", type: "invalid_request_error", param: null, code: null } } });
    const { error } = await collect(withImageFallback(rawModel(fake, "chat")).stream(ask("hi")));
    expect(error).toMatchObject({ kind: "bad_request" });
    expect(fake.requests).toHaveLength(1);
  });
});

describe("recorded wire fixtures", () => {
  it("chat: parallel tool calls with usage-only final chunk", async () => {
    fake.enqueue(fixtureStep("openai-chat-stream-parallel-tool-calls.sse"));
    const { response } = await collect(adapterFor("chat")(targetFor(fake, "chat"), ask("x")));
    const calls = response?.message.content.filter((p) => p.type === "toolCall") ?? [];
    expect(calls).toHaveLength(2);
    expect(calls.every((c) => c.type === "toolCall" && !c.parseError && Object.keys(c.arguments).length > 0)).toBe(true);
    expect(response?.finishReason).toBe("tool_calls");
    expect(response?.usage.promptTokens).toBeGreaterThan(0);
  });

  it("chat: text with usage", async () => {
    fake.enqueue(fixtureStep("openai-chat-stream-text-usage.sse"));
    const { response } = await collect(adapterFor("chat")(targetFor(fake, "chat"), ask("x")));
    expect(response?.message.content[0]?.type).toBe("text");
    expect(response?.usage.completionTokens).toBeGreaterThan(0);
  });

  it("anthropic: text then tool use, with ping and an empty first json fragment", async () => {
    fake.enqueue(fixtureStep("anthropic-messages-stream-text-then-tool-use.sse"));
    const { response } = await collect(adapterFor("anthropic")(targetFor(fake, "anthropic"), ask("x")));
    expect(response?.message.content.map((p) => p.type)).toEqual(["text", "toolCall"]);
    const call = response?.message.content[1];
    expect(call?.type === "toolCall" && call.parseError).toBeFalsy();
    expect(response?.finishReason).toBe("tool_calls");
  });
});
