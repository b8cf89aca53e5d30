/**
 * External tools on the OpenAI API (the Go nanobot's external tools), with the official
 * `openai` client against a running gateway whose turns run in the AgentLoop (what `nanobot
 * gateway` runs) or in DirectTurnProcessor (the library's processor): the client's
 * `tools[]` are offered beside the agent's own (the client's win a name clash); a call to one
 * ends the turn with finish_reason "tool_calls" and goes back to the client; the client's
 * next request with the `tool` message resumes the turn in the same session.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { textOf } from "../../src/core/message-helpers.js";
import { TURN_PROCESSORS, startGatewayFixture } from "./helpers.js";
import type { FixtureOptions, GatewayFixture } from "./helpers.js";

const KEY = "gw-secret-key-ext-0001";
let fx: GatewayFixture | undefined;

afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const [, AGENT_LOOP] = TURN_PROCESSORS[0]!;

async function start(makeProcessor: FixtureOptions["makeProcessor"] = AGENT_LOOP): Promise<OpenAI> {
  fx = await startGatewayFixture({ apiKey: KEY, ...(makeProcessor ? { makeProcessor } : {}) });
  return new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY, maxRetries: 0 });
}

type FakeBody = {
  messages: Array<{ role: string; content: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string }>;
  tools?: Array<{ function: { name: string; description?: string } }>;
};
const sent = (i: number): FakeBody => fx!.fake.requests[i]!.body as FakeBody;

const WEATHER: OpenAI.ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "The weather in a city, looked up by the client.",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
};
const SESSION = { session_id: "ext-1" } as Record<string, unknown>;

for (const [processor, make] of TURN_PROCESSORS) {
  describe(`a turn that calls one of the client's own tools (non-streaming, ${processor})`, () => {
    it("hands the call back with finish_reason tool_calls, and the tool message resumes the same turn", async () => {
      const api = await start(make);
      fx!.fake.enqueue(
        { toolCalls: [{ id: "call_w1", name: "get_weather", arguments: { city: "Paris" } }] },
        { text: "It is sunny in Paris, 21 °C." },
      );
      const question: OpenAI.ChatCompletionMessageParam = { role: "user", content: "What is the weather in Paris?" };
      const first = await api.chat.completions.create({ model: "nanobot", messages: [question], tools: [WEATHER], ...SESSION });
      expect(first.choices[0]?.finish_reason).toBe("tool_calls");
      const call = first.choices[0]?.message.tool_calls?.[0];
      expect(call).toEqual({ id: "call_w1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } });
      // Offered beside the agent's own tools.
      const offered = (sent(0).tools ?? []).map((t) => t.function.name);
      expect(offered).toContain("get_weather");
      expect(offered).toContain("read_file");

      const second = await api.chat.completions.create({
        model: "nanobot",
        messages: [question, first.choices[0]!.message, { role: "tool", tool_call_id: "call_w1", content: "sunny, 21 °C" }],
        tools: [WEATHER],
        ...SESSION,
      });
      expect(second.choices[0]?.finish_reason).toBe("stop");
      expect(second.choices[0]?.message.content).toBe("It is sunny in Paris, 21 °C.");
      // The model saw its call and the client's result after the one user message: no duplicate.
      const tail = sent(1).messages.slice(1);
      expect(tail.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
      expect(tail[1]?.tool_calls?.[0]?.function.name).toBe("get_weather");
      expect(tail[2]).toMatchObject({ role: "tool", tool_call_id: "call_w1", content: "sunny, 21 °C" });
      fx!.fake.assertDone();

      // The session holds the whole exchange once.
      const stored = await fx!.runtime.store().loadMessages("api:ext-1");
      expect(stored.map((m) => `${m.role}:${textOf(m)}`)).toEqual([
        "user:What is the weather in Paris?",
        "assistant:",
        "tool:sunny, 21 °C",
        "assistant:It is sunny in Paris, 21 °C.",
      ]);
    });

    it("the client's tool wins a name clash with the agent's: its call goes back, nanobot does not run it", async () => {
      const api = await start(make);
      const mine: OpenAI.ChatCompletionTool = {
        type: "function",
        function: { name: "read_file", description: "Reads a file on the client's machine.", parameters: { type: "object", properties: { path: { type: "string" } } } },
      };
      fx!.fake.enqueue({ toolCalls: [{ id: "call_r1", name: "read_file", arguments: { path: "/etc/hostname" } }] });
      const res = await api.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "read it" }], tools: [mine], ...SESSION });
      expect(res.choices[0]?.finish_reason).toBe("tool_calls");
      expect(res.choices[0]?.message.tool_calls?.[0]).toMatchObject({ type: "function", function: { name: "read_file" } });
      const readFiles = (sent(0).tools ?? []).filter((t) => t.function.name === "read_file");
      expect(readFiles.map((t) => t.function.description)).toEqual(["Reads a file on the client's machine."]);
      fx!.fake.assertDone();
    });

    it("a tool message that answers no open call is a 400", async () => {
      const api = await start(make);
      const err = await api.chat.completions
        .create({
          model: "nanobot",
          messages: [
            { role: "user", content: "hi" },
            { role: "tool", tool_call_id: "call_nope", content: "?" },
          ],
          ...SESSION,
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as Error).message).toContain("call_nope");
    });
  });

  describe(`a turn that calls one of the client's own tools (streaming, ${processor})`, () => {
    it("streams the tool call with finish_reason tool_calls, and a streamed resume answers", async () => {
      const api = await start(make);
      fx!.fake.enqueue(
        { text: "Let me check.", toolCalls: [{ id: "call_s1", name: "get_weather", arguments: { city: "Oslo" } }] },
        { text: "Snow in Oslo." },
      );
      const question: OpenAI.ChatCompletionMessageParam = { role: "user", content: "Weather in Oslo?" };
      const stream = await api.chat.completions.create({ model: "nanobot", messages: [question], tools: [WEATHER], stream: true, ...SESSION });
      const chunks: OpenAI.ChatCompletionChunk[] = [];
      for await (const c of stream) chunks.push(c);
      const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
      expect(calls).toEqual([{ index: 0, id: "call_s1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }]);
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("Let me check.");
      expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");

      const resumed = await api.chat.completions.create({
        model: "nanobot",
        messages: [
          question,
          { role: "assistant", content: "Let me check.", tool_calls: [{ id: "call_s1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
          { role: "tool", tool_call_id: "call_s1", content: "snow, -3 °C" },
        ],
        tools: [WEATHER],
        stream: true,
        ...SESSION,
      });
      let text = "";
      let finish: string | null | undefined;
      for await (const c of resumed) {
        text += c.choices[0]?.delta.content ?? "";
        finish = c.choices[0]?.finish_reason ?? finish;
      }
      expect(text).toBe("Snow in Oslo.");
      expect(finish).toBe("stop");
      expect(sent(1).messages.filter((m) => m.role === "user")).toHaveLength(1);
      expect(sent(1).messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_s1", content: "snow, -3 °C" });
      fx!.fake.assertDone();
    });
  });
}

describe("the AI SDK (ai + @ai-sdk/openai) runs its own tool through nanobot", () => {
  it("generateText: the model calls the SDK's tool, the SDK runs it and sends the result, nanobot answers", async () => {
    await start();
    const { generateText, stepCountIs, tool, jsonSchema } = await import("ai");
    const { createOpenAI } = await import("@ai-sdk/openai");
    fx!.fake.enqueue(
      { toolCalls: [{ id: "call_ai1", name: "get_weather", arguments: { city: "Rome" } }] },
      { text: "Rome is warm: 28 °C." },
    );
    const cities: string[] = [];
    const provider = createOpenAI({ baseURL: `${fx!.url}/v1`, apiKey: KEY, headers: { "x-session-id": "ai-sdk-1" } });
    const result = await generateText({
      model: provider.chat("nanobot"),
      prompt: "How warm is it in Rome?",
      tools: {
        get_weather: tool({
          description: "The weather in a city.",
          inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
          execute: ({ city }) => {
            cities.push(city);
            return Promise.resolve(`${city}: 28 °C`);
          },
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(cities).toEqual(["Rome"]);
    expect(result.text).toBe("Rome is warm: 28 °C.");
    expect(result.steps.map((s) => s.finishReason)).toEqual(["tool-calls", "stop"]);
    expect(sent(1).messages.filter((m) => m.role === "user")).toHaveLength(1);
    expect(JSON.stringify(sent(1).messages.at(-1))).toContain("Rome: 28");
    fx!.fake.assertDone();
  });
});
