import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AbortedError, ProviderError } from "../../src/core/errors.js";
import { withRetry } from "../../src/providers/retry.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM, FakeStep } from "../fakes/fake-llm-types.js";
import { fixtureStep } from "../fakes/fixture-step.js";
import { ask, collect, deltas, rawModel, recordingSleep } from "./helpers.js";

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
});

const serverError = (status = 500): FakeStep => ({
  kind: "error",
  status,
  body: { error: { message: "The server had an error", type: "server_error", param: null, code: null } },
});

describe("standard retry schedule", () => {
  it("waits 1, 2, 4 s between four attempts and then succeeds", async () => {
    fake.enqueue(serverError(), serverError(502), serverError(503), { text: "finally" });
    const { waits, sleep } = recordingSleep();
    const { events, response } = await collect(withRetry(rawModel(fake, "chat"), { sleep }).stream(ask("hi")));
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(events.filter((e) => e.type === "retry_wait").map((e) => (e.type === "retry_wait" ? [e.attempt, e.delayMs] : []))).toEqual([
      [1, 1000],
      [2, 2000],
      [3, 4000],
    ]);
    expect(events.filter((e) => e.type === "start")).toHaveLength(1);
    expect(response?.message.content).toEqual([{ type: "text", text: "finally" }]);
    expect(fake.requests).toHaveLength(4);
    fake.assertDone();
  });

  it("gives up after the fourth failed attempt", async () => {
    fake.enqueue(serverError(), serverError(), serverError(), fixtureStep("anthropic-error-529-overloaded.json"));
    const { waits, sleep } = recordingSleep();
    const { error } = await collect(withRetry(rawModel(fake, "anthropic"), { sleep }).stream(ask("hi")));
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(error).toMatchObject({ kind: "overloaded", status: 529 });
    expect(fake.requests).toHaveLength(4);
  });

  it.each([408, 409, 429, 504])("retries HTTP %i", async (status) => {
    fake.enqueue({ kind: "error", status, body: { error: { message: "try later", type: "x", param: null, code: null } } }, { text: "ok" });
    const { waits, sleep } = recordingSleep();
    const { response } = await collect(withRetry(rawModel(fake, "chat"), { sleep }).stream(ask("hi")));
    expect(waits).toEqual([1000]);
    expect(response?.finishReason).toBe("stop");
  });

  it("retries a connection reset", async () => {
    fake.enqueue({ kind: "hangup" }, { text: "ok" });
    const { waits, sleep } = recordingSleep();
    const { response } = await collect(withRetry(rawModel(fake, "responses"), { sleep }).stream(ask("hi")));
    expect(waits).toEqual([1000]);
    expect(response?.finishReason).toBe("stop");
  });
});

describe("server-requested waits", () => {
  it("honours Retry-After in seconds", async () => {
    fake.enqueue({ ...serverError(429), headers: { "retry-after": "3" } } as FakeStep, { text: "ok" });
    const { waits, sleep } = recordingSleep();
    await collect(withRetry(rawModel(fake, "chat"), { sleep }).stream(ask("hi")));
    expect(waits).toEqual([3000]);
  });

  it("honours 'Please try again in 6ms' from the OpenAI 429 body", async () => {
    fake.enqueue(fixtureStep("openai-error-429-rate-limit-exceeded.json"), { text: "ok" });
    const { waits, sleep } = recordingSleep();
    const { events } = await collect(withRetry(rawModel(fake, "chat"), { sleep }).stream(ask("hi")));
    expect(waits).toEqual([6]);
    expect(events.find((e) => e.type === "retry_wait")).toMatchObject({ delayMs: 6, error: expect.stringContaining("Rate limit") });
  });

  it("caps a huge Retry-After at 60 s", async () => {
    fake.enqueue({ ...serverError(503), headers: { "retry-after": "3600" } } as FakeStep, { text: "ok" });
    const { waits, sleep } = recordingSleep();
    await collect(withRetry(rawModel(fake, "chat"), { sleep }).stream(ask("hi")));
    expect(waits).toEqual([60_000]);
  });
});

describe("errors that are never retried", () => {
  const cases: Array<[string, FakeStep]> = [
    ["400 bad request", { kind: "error", status: 400, body: { error: { message: "bad param", type: "invalid_request_error", param: null, code: null } } }],
    ["401 auth", { kind: "error", status: 401, body: { error: { message: "Incorrect API key", type: "invalid_request_error", param: null, code: "invalid_api_key" } } }],
    ["403 forbidden", { kind: "error", status: 403, body: { type: "error", error: { type: "permission_error", message: "no" } } }],
    ["429 quota", { kind: "error", status: 429, body: { error: { message: "You exceeded your current quota, check your plan and billing details.", type: "insufficient_quota", param: null, code: "insufficient_quota" } } }],
    ["context overflow", fixtureStep("openai-error-400-context-length-exceeded.json")],
  ];
  it.each(cases)("%s", async (_, step) => {
    fake.enqueue(step);
    const { waits, sleep } = recordingSleep();
    const { error } = await collect(withRetry(rawModel(fake, "chat"), { sleep }).stream(ask("hi")));
    expect(error).toBeInstanceOf(ProviderError);
    expect(waits).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });
});

describe("persistent mode", () => {
  it("doubles up to 60 s and stops after 10 identical errors", async () => {
    for (let i = 0; i < 10; i++) fake.enqueue(serverError(503));
    const { waits, sleep } = recordingSleep();
    const { error } = await collect(withRetry(rawModel(fake, "chat"), { sleep, mode: "persistent" }).stream(ask("hi")));
    expect(waits).toEqual([1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000, 60000]);
    expect(error).toMatchObject({ status: 503 });
    expect(fake.requests).toHaveLength(10);
    fake.assertDone();
  });

  it("keeps going while the errors differ", async () => {
    for (let i = 0; i < 6; i++) fake.enqueue(serverError(i % 2 ? 502 : 503));
    fake.enqueue({ text: "up again" });
    const { waits, sleep } = recordingSleep();
    const { response } = await collect(withRetry(rawModel(fake, "chat"), { sleep, mode: "persistent" }).stream(ask("hi")));
    expect(waits).toHaveLength(6);
    expect(response?.message.content).toEqual([{ type: "text", text: "up again" }]);
  });
});

describe("streamed content", () => {
  it("is not retried after the connection drops mid-answer", async () => {
    fake.enqueue({ text: "partial answer that will be cut", chunkSize: 4, fault: { type: "cut", afterChunks: 3 } });
    const { waits, sleep } = recordingSleep();
    const { events, error } = await collect(withRetry(rawModel(fake, "chat"), { sleep }).stream(ask("hi")));
    expect(deltas(events, "text_delta").length).toBeGreaterThan(0);
    expect(error).toMatchObject({ kind: "connection", streamed: true });
    expect(waits).toEqual([]);
    expect(fake.requests).toHaveLength(1);
  });

  it("is retried after a stalled stream (idle timeout)", async () => {
    fake.enqueue({ text: "stalls after a bit", chunkSize: 4, fault: { type: "stall", afterChunks: 3 } }, { text: "fresh answer" });
    const { waits, sleep } = recordingSleep();
    const model = withRetry(rawModel(fake, "chat", { idleTimeoutMs: 100 }), { sleep });
    const { events, response } = await collect(model.stream(ask("hi")));
    expect(waits).toEqual([1000]);
    expect(events.find((e) => e.type === "retry_wait")).toMatchObject({ error: expect.stringContaining("stalled") });
    expect(response?.message.content).toEqual([{ type: "text", text: "fresh answer" }]);
  });
});

describe("wall timeout and abort", () => {
  it("a call that exceeds the wall timeout fails as timeout and is retried", async () => {
    fake.enqueue({ text: "too late", delayMs: 10_000 }, { text: "in time" });
    const { waits, sleep } = recordingSleep();
    const model = withRetry(rawModel(fake, "anthropic"), { sleep, wallTimeoutMs: 150 });
    const { events, response } = await collect(model.stream(ask("hi")));
    expect(waits).toEqual([1000]);
    expect(events.find((e) => e.type === "retry_wait")).toMatchObject({ error: expect.stringContaining("no complete answer within") });
    expect(response?.message.content).toEqual([{ type: "text", text: "in time" }]);
  });

  it("an answer that is streaming gets the streaming limit, and one that outlasts it too is cut at it", async () => {
    // 10 chunks 60 ms apart: ~600 ms of streaming, past the 150 ms wall limit.
    fake.enqueue({ text: "a long streamed answer!", chunkSize: 3, chunkDelayMs: 60 });
    const { waits, sleep } = recordingSleep();
    const lenient = withRetry(rawModel(fake, "chat"), { sleep, wallTimeoutMs: 150, streamingWallTimeoutMs: 5_000 });
    const kept = await collect(lenient.stream(ask("hi")));
    expect(kept.error).toBeUndefined();
    expect(kept.response?.message.content).toEqual([{ type: "text", text: "a long streamed answer!" }]);
    expect(waits).toEqual([]);

    fake.enqueue({ text: "a long streamed answer!", chunkSize: 3, chunkDelayMs: 60 });
    const strict = withRetry(rawModel(fake, "chat"), { sleep, wallTimeoutMs: 150, streamingWallTimeoutMs: 300 });
    const cut = await collect(strict.stream(ask("hi")));
    // Content reached the caller, so the timeout is final (no retry), and it names the streaming limit.
    expect(cut.error).toBeInstanceOf(ProviderError);
    expect((cut.error as ProviderError).message).toContain("no complete answer within 0.3s");
    expect(waits).toEqual([]);
  });

  it("abort during a retry wait ends with AbortedError and no further request", async () => {
    fake.enqueue(serverError());
    const controller = new AbortController();
    const sleep = (_ms: number, signal?: AbortSignal) => {
      controller.abort();
      return signal?.aborted ? Promise.reject(new AbortedError()) : Promise.resolve();
    };
    const { error } = await collect(withRetry(rawModel(fake, "chat"), { sleep }).stream(ask("hi"), controller.signal));
    expect(error).toBeInstanceOf(AbortedError);
    expect(fake.requests).toHaveLength(1);
  });
});
