import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ResponseStreamEvent } from "openai/resources/responses/responses";
import type { FakeLLM, FakeReply } from "./fake-llm-types.js";
import { startFakeLLM } from "./fake-llm.js";
import { collect, openaiFor } from "./sdk-helpers.js";

/**
 * Wire fidelity, part 2 (OpenAI Responses): the fake's own events through `responses.create`
 * (stream and not) and through the SDK's strict `ResponseStream` accumulator, which throws on
 * any event that refers to an item or part it was not told about first.
 */

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  fake.assertDone();
  await fake.close();
});

const REQUEST = { model: "gpt-5-mini", input: "What's the weather in Paris?" };

const FULL: FakeReply = {
  reasoning: "Need the weather tool twice.",
  reasoningSignature: "gAAAAenc",
  text: "Checking.",
  toolCalls: [
    { id: "call_a", name: "get_weather", arguments: { city: "Paris" } },
    { id: "call_b", name: "get_weather", arguments: { city: "Lyon" } },
  ],
  usage: { promptTokens: 200, completionTokens: 30, cachedTokens: 128 },
};

describe("responses: streamed", () => {
  it("emits the real event sequence, numbered, ending with response.completed", async () => {
    fake.enqueue({ text: "Hi there" });
    const events = await collect(await openaiFor(fake).responses.create({ ...REQUEST, stream: true }));
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const deltas = events.filter((e): e is Extract<ResponseStreamEvent, { type: "response.output_text.delta" }> => e.type === "response.output_text.delta");
    expect(deltas.map((d) => d.delta)).toEqual(["Hi", " there"]);
  });

  it("reasoning, text and two parallel function calls assemble through ResponseStream.finalResponse", async () => {
    fake.enqueue(FULL);
    const final = await openaiFor(fake).responses.stream(REQUEST).finalResponse();
    expect(final.status).toBe("completed");
    expect(final.output_text).toBe("Checking.");
    expect(final.output.map((o) => o.type)).toEqual(["reasoning", "message", "function_call", "function_call"]);
    const [reasoning, , a, b] = final.output;
    if (reasoning?.type !== "reasoning" || a?.type !== "function_call" || b?.type !== "function_call") throw new Error("unexpected items");
    expect(reasoning.summary).toEqual([{ type: "summary_text", text: "Need the weather tool twice." }]);
    expect(reasoning.encrypted_content).toBe("gAAAAenc");
    expect([a.call_id, a.name, a.arguments]).toEqual(["call_a", "get_weather", '{"city":"Paris"}']);
    expect([b.call_id, b.name, b.arguments]).toEqual(["call_b", "get_weather", '{"city":"Lyon"}']);
    expect(final.usage).toEqual({
      input_tokens: 200,
      input_tokens_details: { cached_tokens: 128 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 7 },
      total_tokens: 230,
    });
  });

  it("function call arguments arrive as response.function_call_arguments.delta fragments", async () => {
    fake.enqueue({ toolCalls: [{ name: "search", arguments: '{"query":"paris weather"}' }], chunkSize: 5 });
    const events = await collect(await openaiFor(fake).responses.create({ ...REQUEST, stream: true }));
    const fragments = events.flatMap((e) => (e.type === "response.function_call_arguments.delta" ? [e.delta] : []));
    expect(fragments.join("")).toBe('{"query":"paris weather"}');
    expect(fragments[0]).toBe('{"que');
    const added = events.find((e) => e.type === "response.output_item.added");
    expect(added?.type === "response.output_item.added" && added.item).toMatchObject({ type: "function_call", name: "search", arguments: "" });
  });

  it("a length stop ends with response.incomplete and reason max_output_tokens", async () => {
    fake.enqueue({ text: "The answer is", finishReason: "length" });
    const events = await collect(await openaiFor(fake).responses.create({ ...REQUEST, stream: true }));
    const last = events.at(-1);
    expect(last?.type).toBe("response.incomplete");
    if (last?.type !== "response.incomplete") throw new Error("unreachable");
    expect(last.response.status).toBe("incomplete");
    expect(last.response.incomplete_details).toEqual({ reason: "max_output_tokens" });
  });
});

describe("responses: non-streamed", () => {
  it("returns the same items and usage as one Response object", async () => {
    fake.enqueue(FULL);
    const response = await openaiFor(fake).responses.create(REQUEST);
    expect(response.object).toBe("response");
    expect(response.model).toBe("gpt-5-mini");
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("Checking.");
    expect(response.output.map((o) => o.type)).toEqual(["reasoning", "message", "function_call", "function_call"]);
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(128);
  });

  it("a length stop is status incomplete", async () => {
    fake.enqueue({ text: "cut", finishReason: "length" });
    const response = await openaiFor(fake).responses.create(REQUEST);
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details?.reason).toBe("max_output_tokens");
  });
});
