/**
 * `Idempotency-Key` on `POST /v1/chat/completions` (CONTRACT; the IETF draft's semantics), with
 * the official `openai` client sending the header: a repeat never
 * starts a second turn nor stores the message twice — it gets the first answer, or waits for it
 * while it runs; a key reused with another body is a 422; keys survive a gateway restart; a
 * keyed turn keeps running when its client goes away, so the retry collects the answer.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { textOf } from "../../src/core/message-helpers.js";
import { requestFingerprint } from "../../src/gateway/idempotency.js";
import { userMessage } from "../../src/core/message-helpers.js";
import { TURN_PROCESSORS, startGatewayFixture, waitFor } from "./helpers.js";
import { call, callingAssistant } from "../session/helpers/temp-store.js";
import type { FixtureOptions, GatewayFixture } from "./helpers.js";

const KEY = "gw-secret-key-idem-0001";
let fx: GatewayFixture | undefined;

afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function start(options: FixtureOptions = {}): Promise<OpenAI> {
  fx = await startGatewayFixture({ apiKey: KEY, ...options });
  return new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY, maxRetries: 0 });
}

/** The `openai` client sends no Idempotency-Key of its own (its `idempotencyKey` option is inert for OpenAI). */
const keyed = (key: string): OpenAI.RequestOptions => ({ headers: { "Idempotency-Key": key } });

const ask = (content: string, session = "idem-1"): OpenAI.ChatCompletionCreateParamsNonStreaming & { session_id: string } => ({
  model: "nanobot",
  messages: [{ role: "user", content }],
  session_id: session,
});

async function userMessages(session = "idem-1"): Promise<string[]> {
  const stored = await fx!.runtime.store().loadMessages(`api:${session}`);
  return stored.filter((m) => m.role === "user").map((m) => textOf(m.content));
}

function post(body: unknown, key?: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${fx!.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${KEY}`, ...(key ? { "idempotency-key": key } : {}) },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

describe("Idempotency-Key", () => {
  it("a repeated request gets the first answer: one model call, the message stored once", async () => {
    const api = await start();
    fx!.fake.enqueue({ text: "Paris." });
    const first = await api.chat.completions.create(ask("capital of France?"), keyed("order-1"));
    const again = await api.chat.completions.create(ask("capital of France?"), keyed("order-1")).withResponse();
    expect(first.choices[0]!.message.content).toBe("Paris.");
    expect(again.data.choices[0]!.message.content).toBe("Paris.");
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    expect(fx!.fake.requests).toHaveLength(1);
    expect(await userMessages()).toEqual(["capital of France?"]);
  });

  it("a repeat sent while the first runs waits for it and gets the same answer", async () => {
    const api = await start();
    fx!.fake.enqueue({ text: "Slow answer.", delayMs: 400 });
    const [a, b] = await Promise.all([
      api.chat.completions.create(ask("take your time"), keyed("order-2")),
      (async () => {
        await waitFor(() => fx!.fake.requests.length === 1, "the first model call");
        return api.chat.completions.create(ask("take your time"), keyed("order-2"));
      })(),
    ]);
    expect([a.choices[0]!.message.content, b.choices[0]!.message.content]).toEqual(["Slow answer.", "Slow answer."]);
    expect(fx!.fake.requests).toHaveLength(1);
    expect(await userMessages()).toEqual(["take your time"]);
  });

  it("many keys sent at once in one session all stay known: each repeat replays, no message is stored twice", async () => {
    const api = await start();
    const keys = Array.from({ length: 16 }, (_, i) => `burst-${i}`);
    fx!.fake.enqueue(...keys.map((k) => ({ text: `answer ${k}` })));
    // All at once: the keys' records are written while the others' are being written.
    const firsts = await Promise.all(keys.map((k) => api.chat.completions.create(ask(`question ${k}`), keyed(k))));
    const answers = new Set(firsts.map((r) => r.choices[0]!.message.content));
    expect(answers.size).toBe(keys.length);
    const repeats = await Promise.all(keys.map((k) => api.chat.completions.create(ask(`question ${k}`), keyed(k)).withResponse()));
    expect(repeats.map((r) => r.response.headers.get("idempotent-replayed"))).toEqual(keys.map(() => "true"));
    expect(repeats.map((r) => r.data.choices[0]!.message.content)).toEqual(firsts.map((r) => r.choices[0]!.message.content));
    expect(fx!.fake.requests).toHaveLength(keys.length);
    expect((await userMessages()).sort()).toEqual(keys.map((k) => `question ${k}`).sort());
  });

  it("a streamed repeat gets the answer as a stream", async () => {
    const api = await start();
    fx!.fake.enqueue({ text: "Streamed once." });
    await api.chat.completions.create(ask("stream it"), keyed("order-3"));
    const stream = await api.chat.completions.create({ ...ask("stream it"), stream: true }, keyed("order-3"));
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Streamed once.");
    expect(fx!.fake.requests).toHaveLength(1);
  });

  it("another body with the same key is a 422; other keys and other sessions are separate turns", async () => {
    const api = await start();
    fx!.fake.enqueue({ text: "One." }, { text: "Two." }, { text: "Three." });
    await api.chat.completions.create(ask("first"), keyed("order-4"));
    const reused = await post(ask("something else"), "order-4");
    expect(reused.status).toBe(422);
    expect(((await reused.json()) as { error: { code: string } }).error.code).toBe("idempotency_key_reused");
    await api.chat.completions.create(ask("second"), keyed("order-5"));
    await api.chat.completions.create(ask("first", "idem-2"), keyed("order-4"));
    expect(fx!.fake.requests).toHaveLength(3);
    expect(await userMessages()).toEqual(["first", "second"]);
    expect(await userMessages("idem-2")).toEqual(["first"]);
  });

  it("refuses a malformed key", async () => {
    await start();
    const res = await post(ask("hi"), "x".repeat(300));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_idempotency_key");
  });

  it("a keyed turn keeps running when its client goes away; the retry collects the answer", async () => {
    await start();
    fx!.fake.enqueue({ text: "Worth the wait.", delayMs: 500 });
    const gone = new AbortController();
    const first = post(ask("do not give up"), "order-6", gone.signal).catch((err: unknown) => err);
    await waitFor(() => fx!.fake.requests.length === 1, "the model call");
    gone.abort();
    expect(await first).toBeInstanceOf(Error);
    const retry = await post(ask("do not give up"), "order-6");
    expect(retry.status).toBe(200);
    expect(((await retry.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe("Worth the wait.");
    expect(fx!.fake.requests).toHaveLength(1);
    expect(await userMessages()).toEqual(["do not give up"]);
  });

  it("keys live in the session: they are still known after a restart; an interrupted first attempt is a 409", async () => {
    const api = await start();
    fx!.fake.enqueue({ text: "Before the restart." });
    await api.chat.completions.create(ask("remember me"), keyed("order-7"));
    // A gateway that stopped mid-turn left this key running.
    await fx!.runtime.store().updateMetadata("api:idem-1", {
      idempotency: { ...((await fx!.runtime.store().sessionMetadata("api:idem-1"))?.idempotency as object), "order-8": { fingerprint: requestFingerprint(ask("lost")), at: Date.now(), status: "running" } },
    });
    // A second runtime on the same home: the first one's store, a fresh process's memory.
    const { Runtime } = await import("../../src/agent/runtime.js");
    const { startRuntimeGateway } = await import("../../src/gateway/runtime-gateway.js");
    const second = new Runtime({ config: fx!.runtime.config, home: fx!.home, env: fx!.runtime.env });
    const gateway = await startRuntimeGateway(second, { port: 0 });
    try {
      const again = await fetch(`${gateway.server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${KEY}`, "idempotency-key": "order-7" },
        body: JSON.stringify(ask("remember me")),
      });
      expect(((await again.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe("Before the restart.");
      const interrupted = await fetch(`${gateway.server.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${KEY}`, "idempotency-key": "order-8" },
        body: JSON.stringify(ask("lost")),
      });
      expect(interrupted.status).toBe(409);
      expect(((await interrupted.json()) as { error: { code: string } }).error.code).toBe("idempotency_key_interrupted");
    } finally {
      await gateway.close();
    }
    expect(fx!.fake.requests).toHaveLength(1);
  });
});

describe.each(TURN_PROCESSORS)("Idempotency-Key with %s: a turn a dead process left", (_name, makeProcessor) => {
  it("is resumed by the keyed retry: the message stored once, what the turn saved sent to the model", async () => {
    await start(makeProcessor ? { makeProcessor } : {});
    // What a gateway that died mid-turn leaves: the message stored under the id its key recorded,
    // a pending turn with a saved tool call, and the key still "running".
    const store = fx!.runtime.store();
    const body = ask("add milk to my shopping list");
    const turn = await store.beginTurn("api:idem-1", { ...userMessage("add milk to my shopping list"), id: "msg_dead_0001" });
    const assistant = callingAssistant("Writing it down.", call("call_w", "write_file", { path: "shopping.txt", content: "milk" }));
    await store.saveCheckpoint(turn.turnId, { phase: "awaiting_tools", iteration: 1, newMessages: [assistant], assistant, pendingToolCalls: [call("call_w", "write_file", {})] });
    await store.updateMetadata("api:idem-1", {
      idempotency: { "order-9": { fingerprint: requestFingerprint(body), at: Date.now(), status: "running", messageId: "msg_dead_0001" } },
    });
    fx!.fake.enqueue({ text: "Added milk." });
    const retry = await post(body, "order-9");
    expect(retry.status).toBe(200);
    expect(((await retry.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe("Added milk.");
    const sent = (fx!.fake.requests[0]!.body as { messages: Array<{ role: string }> }).messages.filter((m) => m.role !== "system");
    expect(sent.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(await userMessages()).toEqual(["add milk to my shopping list"]);
    // Answered now: the same key again is a replay, no model call.
    const again = await post(body, "order-9");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(fx!.fake.requests).toHaveLength(1);
  });
});
