import { setTimeout as sleep } from "node:timers/promises";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { FakeLLM, FakeReply } from "./fake-llm-types.js";
import { startFakeLLM } from "./fake-llm.js";
import { fixtureStep } from "./fixture-step.js";
import { ANTHROPIC_REQUEST, CHAT_REQUEST, anthropicFor, assembleChat, collect, openaiFor, rejectionOf } from "./sdk-helpers.js";

/** Wire fidelity, part 3: scripted faults as the official clients experience them. */

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  fake.assertDone();
  await fake.close();
});

const LONG_TEXT: FakeReply = { text: "one two three four five six seven eight" };

async function chatStream(signal?: AbortSignal, quiet = false): Promise<AsyncIterable<ChatCompletionChunk>> {
  return openaiFor(fake, { quiet }).chat.completions.create({ ...CHAT_REQUEST, stream: true }, signal ? { signal } : {});
}

/** Streams `reply`, closing the fake at the first chunk; the client's read must fail. Returns the chunks seen. */
async function chunksBeforeClose(reply: FakeReply): Promise<number> {
  fake.enqueue(reply);
  const seen: ChatCompletionChunk[] = [];
  const reading = (async () => {
    for await (const chunk of await chatStream()) {
      seen.push(chunk);
      await fake.close();
    }
  })();
  expect(await rejectionOf(reading)).toBeInstanceOf(Error);
  return seen.length;
}

async function rawBody(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${fake.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ ...body, stream: true }),
  });
  return res.text();
}

describe("cut: the socket is destroyed mid-stream", () => {
  it("openai chat stream throws after the chunks sent before the cut", async () => {
    fake.enqueue({ ...LONG_TEXT, fault: { type: "cut", afterChunks: 3 } });
    const seen: ChatCompletionChunk[] = [];
    const err = await rejectionOf(
      (async () => {
        for await (const chunk of await chatStream()) seen.push(chunk);
      })(),
    );
    expect(err).toBeInstanceOf(Error);
    expect(seen.map((c) => c.choices[0]?.delta.content)).toEqual(["", "one", " two"]);
  });

  it("anthropic finalMessage rejects", async () => {
    fake.enqueue({ ...LONG_TEXT, fault: { type: "cut", afterChunks: 4 } });
    const err = await rejectionOf(anthropicFor(fake).messages.stream(ANTHROPIC_REQUEST).finalMessage());
    expect(err).toBeInstanceOf(Error);
  });

  it("responses stream rejects", async () => {
    fake.enqueue({ ...LONG_TEXT, fault: { type: "cut", afterChunks: 5 } });
    const err = await rejectionOf(openaiFor(fake).responses.stream({ model: "gpt-5", input: "hi" }).finalResponse());
    expect(err).toBeInstanceOf(Error);
  });
});

describe("stall: chunks stop but the socket stays open", () => {
  it("no more chunks arrive; aborting ends the SDK stream", async () => {
    fake.enqueue({ ...LONG_TEXT, fault: { type: "stall", afterChunks: 2 } });
    const controller = new AbortController();
    const iterator = (await chatStream(controller.signal))[Symbol.asyncIterator]();
    const received = [await iterator.next(), await iterator.next()];
    expect(received.map((r) => r.value?.choices[0]?.delta.content)).toEqual(["", "one"]);
    const third = iterator.next();
    // A stalled stream never yields again; this race can only fail if a chunk does arrive.
    const first = await Promise.race([third.then(() => "chunk"), sleep(50).then(() => "quiet")]);
    expect(first).toBe("quiet");
    controller.abort();
    // The openai SDK ends the iteration quietly when its own signal aborts it.
    expect(await third).toEqual({ value: undefined, done: true });
  });

  it("close() destroys the stalled socket, so the client sees the connection end", async () => {
    expect(await chunksBeforeClose({ ...LONG_TEXT, fault: { type: "stall", afterChunks: 1 } })).toBe(1);
  });
});

describe("hold: the stream waits for the test", () => {
  it("sends the first chunks, then nothing until released, then the rest", async () => {
    let release = (): void => undefined;
    const until = new Promise<void>((resolve) => (release = resolve));
    fake.enqueue({ ...LONG_TEXT, hold: { afterChunks: 2, until } });
    const iterator = (await chatStream())[Symbol.asyncIterator]();
    const received = [await iterator.next(), await iterator.next()];
    expect(received.map((r) => r.value?.choices[0]?.delta.content)).toEqual(["", "one"]);
    const third = iterator.next();
    // A held stream does not yield; this race can only fail if a chunk arrives before release.
    expect(await Promise.race([third.then(() => "chunk"), sleep(50).then(() => "quiet")])).toBe("quiet");
    release();
    expect((await third).value?.choices[0]?.delta.content).toBe(" two");
    let rest = "";
    for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) rest += next.value.choices[0]?.delta.content ?? "";
    expect(rest).toBe(" three four five six seven eight");
  });

  it("close() ends a held stream: the client sees the connection end", async () => {
    expect(await chunksBeforeClose({ ...LONG_TEXT, hold: { afterChunks: 1, until: new Promise(() => undefined) } })).toBe(1);
  });
});

describe("no_done: the stream ends without its terminal event", () => {
  it("chat: no [DONE] line, the finish chunk is still there", async () => {
    fake.enqueue({ text: "hi", fault: { type: "no_done" } });
    const body = await rawBody("/v1/chat/completions", CHAT_REQUEST);
    expect(body).not.toContain("[DONE]");
    expect(body).toContain('"finish_reason":"stop"');
  });

  it("chat: the openai SDK still ends the iteration cleanly", async () => {
    fake.enqueue({ text: "hi", fault: { type: "no_done" } });
    const got = await assembleChat(await chatStream());
    expect(got.text).toBe("hi");
  });

  it("anthropic: no message_stop event", async () => {
    fake.enqueue({ text: "hi", fault: { type: "no_done" } });
    const events = await collect(await anthropicFor(fake).messages.create({ ...ANTHROPIC_REQUEST, stream: true }));
    expect(events.map((e) => e.type).slice(-2)).toEqual(["content_block_stop", "message_delta"]);
  });

  it("responses: no response.completed event", async () => {
    fake.enqueue({ text: "hi", fault: { type: "no_done" } });
    const events = await collect(await openaiFor(fake).responses.create({ model: "gpt-5", input: "hi", stream: true }));
    expect(events.at(-1)?.type).toBe("response.output_item.done");
  });
});

describe("malformed_chunk: a data line that is not JSON", () => {
  it("openai SDK throws a JSON SyntaxError after the good chunks", async () => {
    fake.enqueue({ ...LONG_TEXT, fault: { type: "malformed_chunk", afterChunks: 2 } });
    const seen: ChatCompletionChunk[] = [];
    const err = await rejectionOf(
      (async () => {
        for await (const chunk of await chatStream(undefined, true)) seen.push(chunk);
      })(),
    );
    expect(err).toBeInstanceOf(SyntaxError);
    expect(seen).toHaveLength(2);
  });

  it("anthropic SDK throws too", async () => {
    fake.enqueue({ ...LONG_TEXT, fault: { type: "malformed_chunk", afterChunks: 1 } });
    const err = await rejectionOf(anthropicFor(fake, { quiet: true }).messages.stream(ANTHROPIC_REQUEST).finalMessage());
    // MessageStream wraps the JSON.parse failure in its own error class.
    expect(err).toBeInstanceOf(Anthropic.AnthropicError);
    expect((err as Error).message).toMatch(/JSON|Unterminated/);
  });

  it("responses: the broken event carries the next event's name", async () => {
    fake.enqueue({ ...LONG_TEXT, fault: { type: "malformed_chunk", afterChunks: 3 } });
    const body = await rawBody("/v1/responses", { model: "gpt-5", input: "hi" });
    const events = body.split("\n\n").filter((e) => e !== "");
    expect(events[3]).toMatch(/^event: response\.content_part\.added\ndata: \{"type":"response\.content_part\.added"/);
    expect(() => JSON.parse(events[3]!.split("data: ")[1]!)).toThrow(SyntaxError);
    expect(events[4]).toMatch(/^event: response\.content_part\.added\n/);
  });
});

describe("hangup: the connection closes with no response", () => {
  it("openai → APIConnectionError", async () => {
    fake.enqueue({ kind: "hangup" });
    expect(await rejectionOf(openaiFor(fake).chat.completions.create(CHAT_REQUEST))).toBeInstanceOf(OpenAI.APIConnectionError);
  });

  it("anthropic → APIConnectionError", async () => {
    fake.enqueue({ kind: "hangup" });
    expect(await rejectionOf(anthropicFor(fake).messages.create(ANTHROPIC_REQUEST))).toBeInstanceOf(Anthropic.APIConnectionError);
  });
});

describe("HTTP error steps", () => {
  it("an openai error body and Retry-After header reach the SDK error", async () => {
    fake.enqueue({
      kind: "error",
      status: 429,
      headers: { "retry-after": "7" },
      body: { error: { message: "Rate limit reached", type: "requests", param: null, code: "rate_limit_exceeded" } },
    });
    const err = await rejectionOf(openaiFor(fake).chat.completions.create({ ...CHAT_REQUEST, stream: true }));
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const apiErr = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect([apiErr.code, apiErr.type, apiErr.headers.get("retry-after")]).toEqual(["rate_limit_exceeded", "requests", "7"]);
  });

  it("an anthropic overloaded body with status 529", async () => {
    fake.enqueue({ kind: "error", status: 529, body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } });
    const err = await rejectionOf(anthropicFor(fake).messages.stream(ANTHROPIC_REQUEST).finalMessage());
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect([(err as InstanceType<typeof Anthropic.APIError>).status, (err as InstanceType<typeof Anthropic.APIError>).type]).toEqual([
      529,
      "overloaded_error",
    ]);
  });
});

describe("delays", () => {
  it("delayed headers and spaced chunks still deliver the whole answer", async () => {
    fake.enqueue({ text: "slow but sure", delayMs: 20, chunkDelayMs: 5 });
    const got = await assembleChat(await chatStream());
    expect(got.text).toBe("slow but sure");
  });

  it("a delay longer than the client timeout makes the SDK time out", async () => {
    fake.enqueue({ text: "too late", delayMs: 60_000 });
    const client = new OpenAI({ apiKey: "sk-test", baseURL: fake.openaiBaseURL, maxRetries: 0, timeout: 100 });
    expect(await rejectionOf(client.chat.completions.create(CHAT_REQUEST))).toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
  });

  it("an error step can be delayed too", async () => {
    fake.enqueue({ kind: "error", status: 500, delayMs: 10, body: { error: { message: "boom", type: "server_error", param: null, code: null } } });
    expect(await rejectionOf(openaiFor(fake).chat.completions.create(CHAT_REQUEST))).toBeInstanceOf(OpenAI.InternalServerError);
  });

  it("a raw fixture replayed with eventDelayMs arrives intact", async () => {
    fake.enqueue(fixtureStep("anthropic-messages-stream-text-then-tool-use.sse", { eventDelayMs: 2 }));
    const message = await anthropicFor(fake).messages.stream(ANTHROPIC_REQUEST).finalMessage();
    expect(message.content.at(-1)).toMatchObject({ type: "tool_use", input: { location: "Paris" } });
  });
});
