/**
 * A failed turn on the OpenAI API says whose failure it was: the model provider's is a 502
 * (`upstream_error`), nanobot's own — a stage that threw, a broken configuration — is a 500
 * that names what happened. Streamed requests report the same error as their error event.
 * Both processors the gateway runs (the AgentLoop and `DirectTurnProcessor`) are covered.
 */
import { afterEach, describe, expect, it } from "vitest";
import { textOf } from "../../src/core/message-helpers.js";
import { TURN_PROCESSORS, startGatewayFixture } from "./helpers.js";
import type { GatewayFixture } from "./helpers.js";

let fx: GatewayFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const PROCESSORS = TURN_PROCESSORS;

interface ErrorBody {
  error: { message: string; type: string; code: string | null };
}

/** A non-streamed completion: its status and body. */
async function complete(model: string, content: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${fx!.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content }] }),
  });
  return { status: res.status, body: await res.json() };
}

/** A streamed completion: the error event it ended with (after the role chunk), if any. */
async function streamError(model: string, content: string): Promise<ErrorBody | undefined> {
  const res = await fetch(`${fx!.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content }] }),
  });
  const events = (await res.text()).split("\n\n").filter(Boolean).map((e) => e.replace(/^data: /, ""));
  const last = events.at(-1);
  return last && last !== "[DONE]" ? (JSON.parse(last) as ErrorBody) : undefined;
}

const providerDown = { kind: "error" as const, status: 500, body: { error: { message: "upstream is on fire", type: "server_error", param: null, code: null } } };

describe.each(PROCESSORS)("OpenAI errors through %s", (_name, makeProcessor) => {
  it("a provider that keeps answering HTTP 500 is a 502 upstream_error, streamed or not", async () => {
    fx = await startGatewayFixture({ env: { NANOBOT_RETRY_SCALE: "0" }, ...(makeProcessor ? { makeProcessor } : {}) });
    // Every attempt of the retry schedule fails, for each of the two requests.
    for (let i = 0; i < 10; i++) fx.fake.enqueue(providerDown);
    const once = await complete("nanobot", "hello");
    expect(once.status).toBe(502);
    const expected = { type: "server_error", code: "upstream_error", message: expect.stringMatching(/^The model provider failed: .*upstream is on fire/) as unknown };
    expect((once.body as ErrorBody).error).toMatchObject(expected);
    expect((await streamError("nanobot", "hello again"))?.error).toMatchObject(expected);
  });

  it("a stage that throws inside nanobot is a 500 naming what failed, streamed or not; the next turn works", async () => {
    fx = await startGatewayFixture({ ...(makeProcessor ? { makeProcessor } : {}) });
    const runtime = fx.runtime;
    const resolve = runtime.resolveAgent.bind(runtime);
    let failures = 2;
    runtime.resolveAgent = (...args) => (failures-- > 0 ? Promise.reject(new Error("skills folder unreadable: EACCES")) : resolve(...args));

    const once = await complete("nanobot", "first try");
    expect(once.status).toBe(500);
    const expected = {
      type: "server_error",
      code: "internal_error",
      message: "The turn failed inside nanobot, not at the model provider: skills folder unreadable: EACCES",
    };
    expect((once.body as ErrorBody).error).toEqual({ ...expected, param: null });
    expect((await streamError("nanobot", "second try"))?.error).toMatchObject(expected);
    expect(fx.fake.requests).toHaveLength(0);

    // The session stayed legal: the next turn runs and the model sees what was said before.
    fx.fake.enqueue({ text: "all good now" });
    const next = await complete("nanobot", "third try");
    expect(next.status).toBe(200);
    const sent = (fx.fake.requests[0]?.body.messages as Array<{ role: string; content: unknown }>).filter((m) => m.role === "user").map((m) => String(m.content));
    expect(sent).toEqual(["first try", "second try", "third try"]);
    const stored = await runtime.store().loadMessages("api:default");
    expect(stored.map((m) => `${m.role}:${textOf(m)}`).slice(0, 4)).toEqual([
      "user:first try",
      "assistant:[Assistant reply unavailable due to model error.]",
      "user:second try",
      "assistant:[Assistant reply unavailable due to model error.]",
    ]);
  });

  it("a named agent whose model has no provider is a 500 configuration_error that says so", async () => {
    fx = await startGatewayFixture({ named: { broken: { model: "nosuchprovider/some-model" } }, ...(makeProcessor ? { makeProcessor } : {}) });
    const once = await complete("broken", "hi");
    expect(once.status).toBe(500);
    const error = (once.body as ErrorBody).error;
    expect(error).toMatchObject({ type: "server_error", code: "configuration_error" });
    expect(error.message).toMatch(/^nanobot's configuration cannot run this turn: .*nosuchprovider/);
    expect((await streamError("broken", "hi again"))?.error).toMatchObject({ code: "configuration_error", message: error.message });
    expect(fx.fake.requests).toHaveLength(0);
  });
});
