/**
 * A non-streamed completion says where its time went in a `Server-Timing` header: the wait for
 * the AgentLoop's concurrency gate, the model's time and calls, each stage, and the total. Two
 * requests through a gate of one: the second waits for the first's model call.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { longConversation } from "../support/conversations.js";
import { startGatewayFixture, waitFor } from "./helpers.js";
import type { GatewayFixture } from "./helpers.js";

let fx: GatewayFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/** name → {dur, desc} of a Server-Timing header. */
function parseServerTiming(header: string | null): Map<string, { dur: number; desc?: string }> {
  const metrics = new Map<string, { dur: number; desc?: string }>();
  for (const part of (header ?? "").split(",")) {
    const [name, ...params] = part.trim().split(";");
    const dur = Number(params.find((p) => p.startsWith("dur="))?.slice(4));
    const desc = params.find((p) => p.startsWith("desc="))?.slice(5).replaceAll('"', "");
    if (name) metrics.set(name, { dur, ...(desc ? { desc } : {}) });
  }
  return metrics;
}

describe("Server-Timing on /v1/chat/completions", () => {
  it("reports the gate's wait, the model's time and calls, the stages and the total", async () => {
    fx = await startGatewayFixture({ makeProcessor: (runtime) => new AgentLoop({ runtime, maxConcurrent: 1 }) });
    fx.fake.enqueue({ text: "first", delayMs: 150 }, { text: "second" });
    const client = new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const ask = (session: string) =>
      client.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "hi" }], session_id: session } as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
    const first = ask("one");
    // The second request arrives while the first holds the only slot for its model call.
    await waitFor(() => fx!.fake.requests.length === 1, "the first model request");
    const second = ask("two");
    const [a, b] = await Promise.all([first, second]);
    expect([a.data.choices[0]?.message.content, b.data.choices[0]?.message.content]).toEqual(["first", "second"]);

    const timingA = parseServerTiming(a.response.headers.get("server-timing"));
    const timingB = parseServerTiming(b.response.headers.get("server-timing"));
    expect([...timingA.keys()]).toEqual(["gate", "model", "restore", "compact", "build", "run", "save", "total"]);
    expect(timingA.get("model")).toEqual({ dur: expect.any(Number), desc: "1 call" });
    // The fake answered the first after 150 ms; the second waited at the gate for most of that.
    expect(timingA.get("model")!.dur).toBeGreaterThanOrEqual(140);
    expect(timingB.get("gate")!.dur).toBeGreaterThan(timingA.get("gate")!.dur);
    expect(timingB.get("gate")!.dur).toBeGreaterThan(50);
    for (const timing of [timingA, timingB]) {
      const total = timing.get("total")!.dur;
      expect(total).toBeGreaterThanOrEqual(timing.get("gate")!.dur + timing.get("model")!.dur);
      expect(total).toBeGreaterThanOrEqual(timing.get("run")!.dur);
    }
  });

  it("counts a consolidation summary made before the run as the model's time, not the gateway's", async () => {
    // 20 stored messages of ~600 words: over the 11,400-token history budget of a 20k window, so
    // the turn summarises the oldest first (two rounds, as in test/memory/consolidation.test.ts).
    fx = await startGatewayFixture({ defaults: { contextWindowTokens: 20_000, maxTokens: 1_000 }, makeProcessor: (runtime) => new AgentLoop({ runtime }) });
    await fx.runtime.store().appendMessages("api:consolidating", longConversation());
    fx.fake.enqueue({ text: "They talked about apples.", delayMs: 60 }, { text: "And pears.", delayMs: 60 }, { text: "three", delayMs: 80 });
    const client = new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: "unused", maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: "nanobot", messages: [{ role: "user", content: "and again" }], session_id: "consolidating" } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    expect(data.choices[0]?.message.content).toBe("three");
    expect(fx.fake.requests).toHaveLength(3);
    const timing = parseServerTiming(response.headers.get("server-timing"));
    expect(timing.get("model")?.desc).toBe("3 calls");
    expect(timing.get("compact")!.dur).toBeGreaterThanOrEqual(110);
    expect(timing.get("model")!.dur).toBeGreaterThanOrEqual(190);
  });

  it("is not sent on a failed turn's error response", async () => {
    fx = await startGatewayFixture({ makeProcessor: (runtime) => new AgentLoop({ runtime }) });
    fx.fake.enqueue({ kind: "error", status: 400, body: { error: { message: "bad request", type: "invalid_request_error" } } });
    const res = await fetch(`${fx.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(502);
    expect(res.headers.get("server-timing")).toBeNull();
  });
});
