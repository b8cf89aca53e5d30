/**
 * Issue 20, items 1 and 3 through the gateway's OpenAI-compatible API: a Python-style
 * `modelPresets` / `agents.defaults.modelPreset` config puts the preset's settings on the wire,
 * `/model <preset>` sent as a message switches that API session, and `llmTimeoutS` ends a model
 * that never answers with an upstream error that names the timeout.
 */
import { afterEach, describe, expect, it } from "vitest";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { startGatewayFixture } from "./helpers.js";
import type { GatewayFixture } from "./helpers.js";

let fx: GatewayFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const PRESETS = {
  fast: { model: "fast-model", provider: "custom", maxTokens: 1234, temperature: 0.7, reasoningEffort: "low" },
  deep: { model: "deep-model", provider: "custom", maxTokens: 4321, temperature: 0.2, reasoningEffort: "high" },
};

async function complete(content: string): Promise<{ status: number; body: { choices?: Array<{ message: { content: string } }>; error?: { message: string; code: string } } }> {
  const res = await fetch(`${fx!.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content }] }),
  });
  return { status: res.status, body: (await res.json()) as never };
}

const generation = (n: number) => {
  const body = fx!.fake.requests[n]?.body ?? {};
  return { model: body.model, max_tokens: body.max_tokens, temperature: body.temperature, reasoning_effort: body.reasoning_effort };
};

describe("model presets through the gateway", () => {
  it("modelPreset's settings reach the wire, and /model switches the API session", async () => {
    // The AgentLoop is the processor `nanobot gateway` runs; it answers slash commands.
    fx = await startGatewayFixture({ defaults: { modelPreset: "fast" }, extra: { modelPresets: PRESETS }, makeProcessor: (runtime) => new AgentLoop({ runtime }) });
    fx.fake.enqueue({ text: "fast reply" });
    expect((await complete("hi")).body.choices?.[0]?.message.content).toBe("fast reply");
    expect(generation(0)).toEqual({ model: "fast-model", max_tokens: 1234, temperature: 0.7, reasoning_effort: "low" });

    const switched = await complete("/model deep");
    expect(switched.status).toBe(200);
    expect(switched.body.choices?.[0]?.message.content).toContain("Switched model preset to deep");
    fx.fake.enqueue({ text: "deep reply" });
    expect((await complete("and now?")).body.choices?.[0]?.message.content).toBe("deep reply");
    expect(generation(1)).toEqual({ model: "deep-model", max_tokens: 4321, temperature: 0.2, reasoning_effort: "high" });
    fx.fake.assertDone();
  });

  it("llmTimeoutS: a model that never answers ends as an upstream error naming the timeout", async () => {
    fx = await startGatewayFixture({ defaults: { llmTimeoutS: 0.3 }, env: { NANOBOT_RETRY_SCALE: "0" } });
    for (let i = 0; i < 4; i++) fx.fake.enqueue({ text: "too late", delayMs: 60_000 });
    const r = await complete("hello?");
    expect(r.status).toBe(502);
    expect(r.body.error?.code).toBe("upstream_error");
    expect(r.body.error?.message).toContain("no complete answer within 0.3s (the LLM timeout: llmTimeoutS / NANOBOT_LLM_TIMEOUT_S)");
    expect(fx.fake.requests).toHaveLength(4);
  });
});
