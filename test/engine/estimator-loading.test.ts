import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { userMessage } from "../../src/core/message-helpers.js";
import { createTokenEstimator, runAgent } from "../../src/engine/index.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { makeModel, textTool } from "./helpers/harness.js";

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
});

describe("loading the exact tokenizer", () => {
  it("answers a small conversation on the rough estimate without loading the tokenizer", async () => {
    fake.enqueue({ text: "ok" });
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    const stream = runAgent({ model: makeModel(fake), messages: [userMessage("hi")], estimator, contextWindow: 128_000 });
    expect((await stream.result()).content).toBe("ok");
    expect(estimator.ready).toBe(false);
  });

  it("keeps a tool turn well inside the window on the rough estimate: the tables never load", async () => {
    fake.enqueue({ toolCalls: [{ name: "echo", arguments: { text: "x" } }] }, { text: "done" });
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    const echo = textTool("echo", (args) => String(args.text));
    const stream = runAgent({ model: makeModel(fake), messages: [userMessage("hi")], tools: [echo], estimator, contextWindow: 128_000 });
    expect((await stream.result()).content).toBe("done");
    expect(fake.requests).toHaveLength(2);
    expect(estimator.ready).toBe(false);
  });

  it("counts exactly from the request after a tool result that carries the turn past the share of the window", async () => {
    fake.enqueue({ toolCalls: [{ name: "dump", arguments: {} }] }, { text: "done" });
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    const requestsReady: boolean[] = [];
    // ~3,000 rough tokens of result in a 10,000-token window: over the 25 % share.
    const dump = textTool("dump", () => "word ".repeat(2_400));
    const stream = runAgent({ model: makeModel(fake), messages: [userMessage("hi")], tools: [dump], estimator, contextWindow: 10_000, maxTokens: 0 });
    for await (const event of stream) if (event.type === "llm_request") requestsReady.push(estimator.ready);
    expect((await stream.result()).content).toBe("done");
    expect(requestsReady).toEqual([false, true]);
    // Exact from now on: "hello world" is 2 o200k tokens, the rough estimate says 3.
    expect(estimator.text("hello world")).toBe(2);
  });

  it("waits for exact counts when the conversation may be near the window", async () => {
    const estimator = createTokenEstimator({ model: "gpt-4o" });
    let readyAtRequest: boolean | undefined;
    fake.enqueue({ text: "ok" });
    // ~3,000 rough tokens in a 10,000-token window: over the 25 % share.
    const big = userMessage("word ".repeat(2_400));
    const stream = runAgent({ model: makeModel(fake), messages: [big], estimator, contextWindow: 10_000, maxTokens: 0 });
    for await (const event of stream) if (event.type === "llm_request") readyAtRequest = estimator.ready;
    expect((await stream.result()).stopReason).toBe("completed");
    expect(readyAtRequest).toBe(true);
  });
});
