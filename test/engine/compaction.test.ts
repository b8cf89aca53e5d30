import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assistantMessage, systemMessage, textOf, userMessage } from "../../src/core/message-helpers.js";
import type { Message } from "../../src/core/messages.js";
import { SUMMARY_SECTIONS, isSummaryMessage, runAgent, type TokenEstimator } from "../../src/engine/index.js";
import { readLlmFixture } from "../fakes/fixture-step.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { collect, makeModel, wireMessages } from "./helpers/harness.js";

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
});

/** An estimator that charges exactly what a message's `meta.tokens` says. */
const metaEstimator: TokenEstimator = {
  load: async () => undefined,
  ready: true,
  text: () => 0,
  message: (m) => (typeof m.meta?.tokens === "number" ? m.meta.tokens : 0),
  tools: () => 0,
  basis: "meta#1",
  exact: () => undefined,
};

function weighted<M extends Message>(message: M, tokens: number): M {
  return { ...message, meta: { ...message.meta, tokens } };
}

function history(total: number): Message[] {
  return [
    systemMessage("You are helpful."),
    weighted(userMessage("OLD-QUESTION about the parser"), total - 1),
    weighted(assistantMessage("OLD-ANSWER: the parser is fine"), 1),
    userMessage("NEW-QUESTION"),
  ];
}

const lastUserText = (messages: Record<string, unknown>[]): string => String(messages.at(-1)?.content);

describe("compaction threshold: above 83.5 % of the window", () => {
  it("compacts at 167,001 estimated tokens with a 200,000 window", async () => {
    fake.enqueue({ text: "SUMMARY-ONE" }, { text: "answer" });
    const { result, events } = await collect(
      runAgent({ model: makeModel(fake), messages: history(167_001), contextWindow: 200_000, estimator: metaEstimator }),
    );
    expect(fake.requests).toHaveLength(2);
    const summaryRequest = fake.requests[0]!;
    expect(summaryRequest.body.tools).toBeUndefined();
    const prompt = lastUserText(wireMessages(summaryRequest));
    for (const section of SUMMARY_SECTIONS) expect(prompt).toContain(`## ${section}`);
    expect(prompt).toContain("OLD-QUESTION");
    expect(prompt).not.toContain("NEW-QUESTION");

    const sent = wireMessages(fake.requests[1]);
    // The summary and the new question are one user turn (roles alternate for every provider).
    expect(sent.map((m) => m.role)).toEqual(["system", "user"]);
    expect(String(sent[1]?.content)).toContain("SUMMARY-ONE");
    expect(String(sent[1]?.content)).toMatch(/SUMMARY-ONE[\s\S]*\n\nNEW-QUESTION$/);

    expect(result.content).toBe("answer");
    expect(result.archivedMessages?.map((m) => textOf(m))).toEqual(["OLD-QUESTION about the parser", "OLD-ANSWER: the parser is fine"]);
    expect(result.newMessages.filter(isSummaryMessage)).toHaveLength(1);
    expect(events.some((e) => e.type === "compaction" && e.kind === "summary")).toBe(true);
    fake.assertDone();
  });

  it("does not compact at exactly 167,000", async () => {
    fake.enqueue({ text: "answer" });
    const { result } = await collect(
      runAgent({ model: makeModel(fake), messages: history(167_000), contextWindow: 200_000, estimator: metaEstimator }),
    );
    expect(fake.requests).toHaveLength(1);
    expect(result.archivedMessages).toBeUndefined();
  });

  it("never compacts when the window is 0", async () => {
    fake.enqueue({ text: "answer" });
    await collect(runAgent({ model: makeModel(fake), messages: history(10_000_000), contextWindow: 0, estimator: metaEstimator }));
    expect(fake.requests).toHaveLength(1);
    expect(wireMessages(fake.requests[0])).toHaveLength(4);
  });

  it("a second compaction summarises only what came after the first summary, plus its text", async () => {
    fake.enqueue({ text: "SUMMARY-ONE" }, { text: "answer one" });
    const first = await collect(runAgent({ model: makeModel(fake), messages: history(167_001), contextWindow: 200_000, estimator: metaEstimator }));
    const summary = first.result.newMessages.find(isSummaryMessage)!;

    fake.enqueue({ text: "SUMMARY-TWO" }, { text: "answer two" });
    const secondHistory: Message[] = [
      systemMessage("You are helpful."),
      summary,
      userMessage("NEW-QUESTION"),
      weighted(assistantMessage("MIDDLE-ANSWER about tokens"), 167_001),
      userMessage("LATEST-QUESTION"),
    ];
    const second = await collect(runAgent({ model: makeModel(fake), messages: secondHistory, contextWindow: 200_000, estimator: metaEstimator }));
    const prompt = lastUserText(wireMessages(fake.requests[2]));
    expect(prompt).toContain("SUMMARY-ONE");
    expect(prompt).toContain("MIDDLE-ANSWER");
    expect(prompt).not.toContain("OLD-QUESTION");
    expect(prompt).not.toContain("LATEST-QUESTION");
    expect(second.result.archivedMessages?.[0]).toBe(summary);
    const sent = wireMessages(fake.requests[3]);
    expect(String(sent[1]?.content)).toContain("SUMMARY-TWO");
    expect(String(sent[1]?.content)).not.toContain("SUMMARY-ONE");
    fake.assertDone();
  });

  it("continues uncompacted when the summary is empty", async () => {
    fake.enqueue({ text: "" }, { text: "answer" });
    const { result, events } = await collect(
      runAgent({ model: makeModel(fake), messages: history(167_001), contextWindow: 200_000, estimator: metaEstimator }),
    );
    expect(result.content).toBe("answer");
    expect(result.archivedMessages).toBeUndefined();
    expect(wireMessages(fake.requests[1])).toHaveLength(4);
    expect(events.some((e) => e.type === "compaction")).toBe(false);
  });
});

describe("provider usage wins over the estimate", () => {
  it("compacts on the next iteration when the reported prompt tokens cross the threshold", async () => {
    const echo = { name: "echo", description: "echo", parameters: {}, readOnly: true, execute: async () => "echoed" };
    fake.enqueue(
      { toolCalls: [{ name: "echo", arguments: {} }], usage: { promptTokens: 170_000, completionTokens: 10 } },
      { text: "SUMMARY-USAGE" },
      { text: "answer" },
    );
    // The real tokenizer puts this history at a few dozen tokens: only the usage can trigger compaction.
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: history(1), contextWindow: 200_000, tools: [echo] }));
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests[1]?.body.tools).toBeUndefined();
    expect(lastUserText(wireMessages(fake.requests[1]))).toContain("OLD-QUESTION");
    expect(String(wireMessages(fake.requests[2])[1]?.content)).toContain("SUMMARY-USAGE");
    // This turn's input and its tool round are kept verbatim after the summary.
    // (The turn's input shares the summary's user turn: roles alternate for every provider.)
    expect(wireMessages(fake.requests[2]).slice(1).map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(String(wireMessages(fake.requests[2])[1]?.content)).toContain("NEW-QUESTION");
    expect(result.content).toBe("answer");
  });
});

describe("context overflow from the provider", () => {
  it("compacts and retries once", async () => {
    const overflow = JSON.parse(readLlmFixture("openai-error-400-context-length-exceeded.json")) as unknown;
    fake.enqueue({ kind: "error", status: 400, body: overflow }, { text: "SUMMARY" }, { text: "answer" });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: history(10), estimator: metaEstimator }));
    expect(fake.requests).toHaveLength(3);
    expect(lastUserText(wireMessages(fake.requests[1]))).toContain("OLD-QUESTION");
    const retried = wireMessages(fake.requests[2]);
    expect(String(retried[1]?.content)).toContain("SUMMARY");
    expect(result.content).toBe("answer");
    expect(result.stopReason).toBe("completed");
  });

  it("ends with stop reason error when the retry overflows too", async () => {
    const overflow = JSON.parse(readLlmFixture("openai-error-400-context-length-exceeded.json")) as unknown;
    fake.enqueue({ kind: "error", status: 400, body: overflow }, { text: "SUMMARY" }, { kind: "error", status: 400, body: overflow });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: history(10), estimator: metaEstimator }));
    expect(fake.requests).toHaveLength(3);
    expect(result.stopReason).toBe("error");
    fake.assertDone();
  });
});
