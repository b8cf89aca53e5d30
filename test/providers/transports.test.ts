/**
 * The two ways a provider request goes out — Node's http module (default) and an injected
 * fetch — must behave the same: streamed deltas, HTTP errors with their headers, a cut
 * connection, a stall, the caller's abort, and a refused connection.
 */
import { EventEmitter } from "node:events";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AbortedError, ProviderError } from "../../src/core/errors.js";
import { encodeJsonBody } from "../../src/providers/json-body.js";
import { openWithNodeHttp } from "../../src/providers/sse-source.js";
import type { ModelTarget } from "../../src/providers/types.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { ask, collect, deltas, rawModel } from "./helpers.js";

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
});

const fetchCalls: string[] = [];
const countingFetch: typeof fetch = (input, init) => {
  fetchCalls.push(String(input));
  return fetch(input, init);
};

const TRANSPORTS: [string, Partial<ModelTarget>][] = [
  ["node http", {}],
  ["injected fetch", { fetch: countingFetch }],
];

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.each(TRANSPORTS)("provider requests over %s", (name, extra) => {
  it("streams the reply in deltas and reports usage", async () => {
    fetchCalls.length = 0;
    fake.enqueue({ text: "one two three", usage: { promptTokens: 7, completionTokens: 3 } });
    const { events, response, error } = await collect(rawModel(fake, "chat", extra).stream(ask("hi")));
    expect(error).toBeUndefined();
    expect(deltas(events, "text_delta")).toBe("one two three");
    expect(events.filter((e) => e.type === "text_delta").length).toBeGreaterThan(1);
    expect(response?.usage).toMatchObject({ promptTokens: 7, completionTokens: 3 });
    expect(fetchCalls.length).toBe(name === "injected fetch" ? 1 : 0);
  });

  it("fails with the provider's error when it arrives inside the stream, after the deltas before it", async () => {
    const chunk = (delta: object) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
    const body = `${chunk({ role: "assistant", content: "" })}${chunk({ content: "partial" })}data: ${JSON.stringify({ error: { message: "The server is overloaded", type: "server_error" } })}\n\ndata: [DONE]\n\n`;
    fake.enqueue({ kind: "raw", body, contentType: "text/event-stream" });
    const { events, error } = await collect(rawModel(fake, "chat", extra).stream(ask("hi")));
    expect(deltas(events, "text_delta")).toBe("partial");
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ kind: "server", streamed: true });
    expect((error as Error).message).toContain("stream error: The server is overloaded");
  });

  it("maps an HTTP error with its Retry-After header", async () => {
    fake.enqueue({ kind: "error", status: 429, body: { error: { message: "Rate limit reached", type: "rate_limit_error" } }, headers: { "retry-after": "7" } });
    const { error } = await collect(rawModel(fake, "chat", extra).stream(ask("hi")));
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ status: 429, kind: "rate_limit", retryAfterSeconds: 7 });
  });

  it("says the answer was cut off when the connection drops mid-stream", async () => {
    fake.enqueue({ text: "a b c d e f", chunkSize: 1, fault: { type: "cut", afterChunks: 2 } });
    const { events, error } = await collect(rawModel(fake, "chat", extra).stream(ask("hi")));
    expect(deltas(events, "text_delta").length).toBeGreaterThan(0);
    expect(error).toMatchObject({ kind: "connection" });
    expect((error as Error).message).toMatch(/connection lost mid-answer/);
  });

  it("fails a stream that goes quiet as stream_stalled", async () => {
    fake.enqueue({ text: "a b c", chunkSize: 1, fault: { type: "stall", afterChunks: 1 } });
    const { error } = await collect(rawModel(fake, "chat", { ...extra, idleTimeoutMs: 150 }).stream(ask("hi")));
    expect(error).toMatchObject({ kind: "stream_stalled" });
  });

  it("stops on the caller's abort with an AbortedError", async () => {
    fake.enqueue({ text: "slow answer", delayMs: 5_000 });
    const controller = new AbortController();
    const stream = rawModel(fake, "chat", extra).stream(ask("hi"), controller.signal);
    setTimeout(() => controller.abort(), 50);
    const { error } = await collect(stream);
    expect(error).toBeInstanceOf(AbortedError);
  });

  it("names the refused connection", async () => {
    const port = await closedPort();
    const { error } = await collect(rawModel(fake, "chat", { ...extra, baseURL: `http://127.0.0.1:${port}/v1` }).stream(ask("hi")));
    expect(error).toMatchObject({ kind: "connection" });
    expect((error as Error).message).toContain("ECONNREFUSED");
  });
});

it.each(TRANSPORTS)("keeps its connections for the next requests when a stream is read to its [DONE] (%s)", async (name, extra) => {
  const answers = ["first", "second", "third", "fourth", "fifth", "sixth"];
  fake.enqueue(...answers.map((text) => ({ text })));
  for (const expected of answers) {
    const { events, error } = await collect(rawModel(fake, "chat", extra).stream(ask("hi")));
    expect(error).toBeUndefined();
    expect(deltas(events, "text_delta")).toBe(expected);
  }
  // Node's agent hands the one socket from request to request; fetch's pool may open a second
  // while the first is being released, and then reuses the two.
  expect(fake.connections).toBeLessThanOrEqual(name === "node http" ? 1 : 2);
});

describe("node http requests", () => {
  it("does not pile listeners on a signal that outlives its requests, and still aborts the next one", async () => {
    const controller = new AbortController();
    const init = () => ({
      url: `${fake.openaiBaseURL}/chat/completions`,
      headers: { "content-type": "application/json" },
      body: encodeJsonBody({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }] }),
      idleMs: 5_000,
      signal: controller.signal,
    });
    fake.enqueue({ text: "one" }, { text: "two" }, { text: "three" }, { text: "slow", delayMs: 5_000 });
    for (let i = 0; i < 3; i++) {
      const source = await openWithNodeHttp(init());
      let messages = 0;
      await source.each(() => void messages++);
      expect(messages).toBeGreaterThan(1);
      source.close();
    }
    await new Promise((resolve) => setImmediate(resolve));
    // One native listener watches the signal for every request (core/on-abort.ts), not one per request.
    expect(EventEmitter.getEventListeners(controller.signal, "abort").length).toBeLessThanOrEqual(1);
    const pending = openWithNodeHttp(init());
    setTimeout(() => controller.abort(), 50);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    await expect(openWithNodeHttp(init())).rejects.toMatchObject({ name: "AbortError" });
  });

  it("sends a base URL's user and password as basic auth when there is no API key, and the key's bearer when there is", async () => {
    fake.enqueue({ text: "ok" }, { text: "ok" });
    const base = new URL(fake.openaiBaseURL);
    const baseURL = `http://us%20er:p%40ss@${base.host}${base.pathname}`;
    expect((await collect(rawModel(fake, "chat", { baseURL, apiKey: "" }).stream(ask("hi")))).error).toBeUndefined();
    expect(fake.requests.at(-1)!.headers["authorization"]).toBe(`Basic ${Buffer.from("us er:p@ss").toString("base64")}`);
    expect((await collect(rawModel(fake, "chat", { baseURL }).stream(ask("hi")))).error).toBeUndefined();
    expect(fake.requests.at(-1)!.headers["authorization"]).toBe("Bearer sk-test");
  });
});
