/**
 * Category 4 (oversized) — inputs far past normal sizes, through the real parts: a 20 MB HTTP
 * body to the gateway (413 with an OpenAI-shaped error, the gateway keeps serving), a 10 MB
 * tool output (head and tail kept, the middle elided before the model sees it), and a 1 MB user
 * message (answered or refused with a clear error; the process and the session survive).
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { DirectTurnProcessor } from "../../src/agent/turn-processor.js";
import { startRuntimeGateway } from "../../src/gateway/runtime-gateway.js";
import type { RunningGateway } from "../../src/gateway/runtime-gateway.js";
import { historyProblems } from "../../src/session/index.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { startRuntime, wireMessages, wireProblems, wireText } from "./helpers.js";
import type { RuntimeFixture } from "./helpers.js";

const KEY = "gw-test-SECRET-oversized-01";
const MB = 1024 * 1024;
let fake: FakeLLM;
let fx: RuntimeFixture;
let gateway: RunningGateway | undefined;
const figures = { rejected413: 0, truncated: 0, largeMessages: 0 };

beforeEach(async () => {
  fake = await startFakeLLM();
  fx = await startRuntime(fake, { extra: { gateway: { host: "127.0.0.1", apiKey: KEY } } });
});
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await fx.close();
  await fake.close();
});
afterAll(() => {
  console.log(`bad input (oversized): ${figures.rejected413} bodies refused with 413, ${figures.truncated} huge outputs truncated, ${figures.largeMessages} 1 MB messages handled`);
});

async function gatewayUrl(): Promise<string> {
  gateway = await startRuntimeGateway(fx.runtime, { port: 0 });
  return gateway.server.url;
}

const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };

describe("oversized inputs", () => {
  it("a 20 MB request body gets 413 with a clear error, on /v1 and /mcp, and the gateway keeps serving", async () => {
    const url = await gatewayUrl();
    const huge = JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "x".repeat(20 * MB) }] });
    expect(huge.length).toBeGreaterThan(20 * MB);
    for (const path of ["/v1/chat/completions", "/mcp"]) {
      const res = await fetch(`${url}${path}`, { method: "POST", headers: { ...headers, accept: "application/json, text/event-stream" }, body: huge });
      expect(res.status, path).toBe(413);
      const body = (await res.json()) as { error: { message: string; code: string } };
      expect(body.error.message).toMatch(/too large.*20 MB/);
      figures.rejected413++;
    }
    // Streamed without a length: the limit still holds while reading.
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        const piece = new TextEncoder().encode("x".repeat(MB));
        controller.enqueue(new TextEncoder().encode('{"model":"nanobot","messages":[{"role":"user","content":"'));
        for (let i = 0; i < 21; i++) controller.enqueue(piece);
        controller.enqueue(new TextEncoder().encode('"}]}'));
        controller.close();
      },
    });
    const streamed = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers, body: chunks, duplex: "half" } as RequestInit);
    expect(streamed.status).toBe(413);
    figures.rejected413++;
    fake.enqueue({ text: "still serving" });
    const ok = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers, body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "hi" }] }) });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content).toBe("still serving");
    expect(fake.requests).toHaveLength(1);
  });

  it("a 10 MB tool output is truncated before it reaches the model", async () => {
    fake.enqueue(
      { toolCalls: [{ id: "call_big", name: "exec", arguments: { command: "head -c 10485760 /dev/zero | tr '\\0' x; echo END-MARKER" } }] },
      { text: "that was a lot" },
    );
    const reply = await new DirectTurnProcessor(fx.runtime).process({ sessionKey: "big:out", content: "print a lot" });
    expect(reply).toMatchObject({ stopReason: "completed", content: "that was a lot" });
    const sent = wireMessages(fake.requests[1]);
    const result = sent.find((m) => m.role === "tool");
    const text = wireText(result!);
    // Sizes and flags only: a failing 10 MB string would flood the report.
    const limit = fx.runtime.config.agents.defaults.maxToolResultChars;
    expect({ length: text.length, bounded: text.length < limit + 2_000, marked: /truncated|omitted|elided/i.test(text) }).toMatchObject({ bounded: true, marked: true });
    expect(JSON.stringify(fake.requests[1]?.body).length).toBeLessThan(200_000);
    // The stored session holds a bounded result too, not 10 MB.
    const stored = await fx.runtime.store().loadMessages("big:out");
    const storedTool = stored.find((m) => m.role === "tool");
    expect(JSON.stringify(storedTool).length).toBeLessThan(200_000);
    figures.truncated++;
  });

  it("a 1 MB user message through a session turn: an answer or one clear error line, and the session stays usable", async () => {
    const big = `please summarise: ${"lorem ipsum dolor sit amet ".repeat(40_000)}`.slice(0, MB);
    fake.enqueue({ text: "summary done" }, { text: "small answer" });
    const reply = await new DirectTurnProcessor(fx.runtime).process({ sessionKey: "big:in", content: big });
    if (reply.stopReason === "error") {
      expect(reply.error).toMatch(/too (long|large)|context|tokens/i);
      expect(reply.error).not.toContain("\n");
    } else {
      expect(reply.content).toBe("summary done");
    }
    const next = await new DirectTurnProcessor(fx.runtime).process({ sessionKey: "big:in", content: "and now something small" });
    expect(next).toMatchObject({ stopReason: "completed" });
    const last = wireMessages(fake.requests.at(-1));
    expect(wireProblems(last)).toEqual([]);
    expect(last.at(-1)).toMatchObject({ role: "user", content: "and now something small" });
    expect(historyProblems(await fx.runtime.store().loadHistory("big:in"))).toEqual([]);
    figures.largeMessages++;
  });

  it("a 1 MB user message the provider refuses as too long fails clearly, and does not brick the session", async () => {
    const big = `please summarise: ${"lorem ipsum dolor sit amet ".repeat(40_000)}`.slice(0, MB);
    const overflow = {
      kind: "error" as const,
      status: 400,
      body: { error: { message: "This model's maximum context length is 200000 tokens. However, your messages resulted in 262144 tokens.", type: "invalid_request_error", code: "context_length_exceeded" } },
    };
    fake.enqueue(overflow, overflow);
    const reply = await new DirectTurnProcessor(fx.runtime).process({ sessionKey: "big:refused", content: big });
    expect(reply.stopReason).toBe("error");
    expect(reply.error).toMatch(/context length/i);
    expect(reply.error).not.toContain("\n");
    fake.enqueue({ text: "small answer" });
    const next = await new DirectTurnProcessor(fx.runtime).process({ sessionKey: "big:refused", content: "something small" });
    expect(next).toMatchObject({ stopReason: "completed", content: "small answer" });
    // The next request fits the window: the oversized message is not replayed whole.
    const sentChars = JSON.stringify(fake.requests.at(-1)?.body).length;
    expect(sentChars, `next request is ${sentChars} chars`).toBeLessThan(MB / 2);
    figures.largeMessages++;
  });

  it("a 1 MB user message through the gateway gets a response, not a crash", async () => {
    const url = await gatewayUrl();
    fake.enqueue({ text: "ok big" });
    const res = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers,
      body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "y ".repeat(MB / 2) }] }),
    });
    expect([200, 400, 413]).toContain(res.status);
    const body = (await res.json()) as { choices?: Array<{ message: { content: string } }>; error?: { message: string } };
    if (res.status === 200) expect(body.choices?.[0]?.message.content).toBe("ok big");
    else expect(body.error?.message).toMatch(/too (long|large)|context|tokens/i);
    figures.largeMessages++;
  });
});
