import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { startGatewayFixture } from "./helpers.js";
import type { GatewayFixture } from "./helpers.js";

const KEY = "gw-secret-key-0001";
let fx: GatewayFixture | undefined;

afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

function client(apiKey = KEY): OpenAI {
  if (!fx) throw new Error("no fixture");
  return new OpenAI({ baseURL: `${fx.url}/v1`, apiKey, maxRetries: 0 });
}

type FakeBody = { messages: Array<{ role: string; content: unknown }> };

describe("the official openai client against a running gateway", () => {
  it("non-streaming: one completion in OpenAI's shape, the last user message as input", async () => {
    fx = await startGatewayFixture({ apiKey: KEY });
    fx.fake.enqueue({ text: "Paris is the capital.", usage: { promptTokens: 21, completionTokens: 5 } });
    const res = await client().chat.completions.create({
      model: "nanobot",
      messages: [
        { role: "system", content: "ignored: the agent has its own instructions" },
        { role: "user", content: "What is the capital of France?" },
      ],
    });
    expect(res.id).toMatch(/^chatcmpl-/);
    expect(res.object).toBe("chat.completion");
    expect(res.model).toBe("nanobot");
    expect(res.choices).toEqual([
      { index: 0, message: { role: "assistant", content: "Paris is the capital.", refusal: null }, logprobs: null, finish_reason: "stop" },
    ]);
    expect(res.usage).toEqual({ prompt_tokens: 21, completion_tokens: 5, total_tokens: 26 });
    const sent = fx.fake.requests[0]?.body as FakeBody;
    expect(sent.messages.at(-1)).toEqual({ role: "user", content: "What is the capital of France?" });
    expect(sent.messages.filter((m) => m.role === "user")).toHaveLength(1);
    fx.fake.assertDone();
  });

  it("streaming: deltas reassemble the reply, the finish chunk and the usage chunk come last", async () => {
    fx = await startGatewayFixture({ apiKey: KEY });
    fx.fake.enqueue({ text: "one two three four", usage: { promptTokens: 9, completionTokens: 4 } });
    const stream = await client().chat.completions.create({
      model: "nanobot",
      messages: [{ role: "user", content: "count" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: "assistant", content: "", refusal: null });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(text).toBe("one two three four");
    // Streamed in several deltas, not one block.
    expect(chunks.filter((c) => (c.choices[0]?.delta.content ?? "") !== "").length).toBeGreaterThan(1);
    const finish = chunks.at(-2);
    expect(finish?.choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: "stop" }]);
    expect(chunks.at(-1)).toMatchObject({ object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  it("keeps a session across two calls with session_id: the second request replays the first exchange", async () => {
    fx = await startGatewayFixture({ apiKey: KEY });
    fx.fake.enqueue({ text: "Nice to meet you, Ada." }, { text: "Your name is Ada." });
    const api = client();
    const extra = { session_id: "s-42" } as Record<string, unknown>;
    await api.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "I am Ada" }], ...extra });
    const second = await api.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "Who am I?" }], ...extra });
    expect(second.choices[0]?.message.content).toBe("Your name is Ada.");
    const sent = fx.fake.requests[1]?.body as FakeBody;
    expect(sent.messages.slice(1)).toEqual([
      { role: "user", content: "I am Ada" },
      { role: "assistant", content: "Nice to meet you, Ada." },
      { role: "user", content: "Who am I?" },
    ]);
    const stored = await fx.runtime.store().loadMessages("api:s-42");
    expect(stored).toHaveLength(4);
  });

  it("a wrong key is a 401 AuthenticationError and no turn runs", async () => {
    fx = await startGatewayFixture({ apiKey: KEY });
    const err = await client("wrong-key").chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((err as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
    expect(fx.fake.requests).toHaveLength(0);
  });

  it("an unknown model is a 400 BadRequestError with code model_not_found", async () => {
    fx = await startGatewayFixture({ apiKey: KEY });
    const err = await client().chat.completions.create({ model: "gpt-ghost", messages: [{ role: "user", content: "hi" }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const bad = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(bad.status).toBe(400);
    expect(bad.code).toBe("model_not_found");
    expect(bad.param).toBe("model");
    expect(bad.type).toBe("invalid_request_error");
  });

  it("lists nanobot and the named agents as models", async () => {
    fx = await startGatewayFixture({ apiKey: KEY, extra: { agents: { defaults: {}, helper: { instructions: "help", model: "custom/test-model" } } } });
    const ids: string[] = [];
    for await (const m of client().models.list()) ids.push(m.id);
    expect(ids).toEqual(["nanobot", "helper"]);
  });
});
