/**
 * A provider that numbers tool calls per answer (`call_0` in every response), through the
 * gateway with the official `openai` client: every request nanobot sends keeps its call ids
 * unique, the repeats renamed `<id>_2`, `<id>_3`, … and each tool result following its call.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { TURN_PROCESSORS, startGatewayFixture } from "./helpers.js";
import type { GatewayFixture } from "./helpers.js";

let fx: GatewayFixture | undefined;

afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

type FakeBody = { messages: Array<{ role: string; tool_calls?: Array<{ id: string }>; tool_call_id?: string }> };

describe("tool call ids a provider repeats in every answer", () => {
  it("go out unique in every later request, each result with its own call", async () => {
    const [, makeProcessor] = TURN_PROCESSORS[0]!;
    fx = await startGatewayFixture(makeProcessor ? { makeProcessor } : {});
    const api = new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: "unused", maxRetries: 0 });
    for (let turn = 1; turn <= 3; turn++) {
      fx.fake.enqueue({ toolCalls: [{ id: "call_0", name: "list_dir", arguments: { path: "." } }] }, { text: `done ${turn}` });
      const res = await api.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: `look ${turn}` }], session_id: "repeats" } as OpenAI.ChatCompletionCreateParamsNonStreaming);
      expect(res.choices[0]?.message.content).toBe(`done ${turn}`);
    }
    fx.fake.assertDone();
    const last = fx.fake.requests.at(-1)!.body as FakeBody;
    const calls = last.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id));
    const results = last.messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
    expect(calls).toEqual(["call_0", "call_0_2", "call_0_3"]);
    expect(results).toEqual(calls);
  });
});
