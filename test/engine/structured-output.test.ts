import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runAgent } from "../../src/engine/index.js";
import { userMessage } from "../../src/core/message-helpers.js";
import { SCHEMA_PROMPT } from "../../src/engine/loop/endings.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { collect, makeModel, wireMessages } from "./helpers/harness.js";

const output = {
  name: "weather",
  schema: { type: "object", properties: { city: { type: "string" }, tempC: { type: "number" } }, required: ["city", "tempC"], additionalProperties: false },
};

let fake: FakeLLM;
beforeEach(async () => {
  fake = await startFakeLLM();
});
afterEach(async () => {
  await fake.close();
});

describe("structured output is validated against the agent's schema", () => {
  it("an answer that does not match is sent back once for correction", async () => {
    fake.enqueue({ text: '{"city":"Oslo"}' }, { text: '{"city":"Oslo","tempC":-3}' });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("weather?")], output }));
    expect(result.stopReason).toBe("completed");
    expect(JSON.parse(result.content)).toEqual({ city: "Oslo", tempC: -3 });
    const second = wireMessages(fake.requests[1]);
    expect(String(second.at(-1)?.content)).toContain(SCHEMA_PROMPT);
    expect((fake.requests[0]?.body.response_format as { type: string }).type).toBe("json_schema");
    fake.assertDone();
  });

  it("a second mismatch is kept with a warning rather than looping", async () => {
    fake.enqueue({ text: "not json" }, { text: "still not json" });
    const { result, events } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("weather?")], output }));
    expect(result.content).toBe("still not json");
    expect(events.some((e) => e.type === "warning" && e.message.includes("output schema"))).toBe(true);
    fake.assertDone();
  });

  it("a matching answer costs one request", async () => {
    fake.enqueue({ text: '{"city":"Rome","tempC":21}' });
    const { result } = await collect(runAgent({ model: makeModel(fake), messages: [userMessage("weather?")], output }));
    expect(result.content).toBe('{"city":"Rome","tempC":21}');
    fake.assertDone();
  });
});
