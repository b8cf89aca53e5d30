import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import type { FakeLLM, FakeLLMOptions } from "./fake-llm-types.js";
import { startFakeLLM } from "./fake-llm.js";
import { fixtureStep, fixturesDir, llmFixturePath } from "./fixture-step.js";
import { ANTHROPIC_REQUEST, CHAT_REQUEST, anthropicFor, collect, openaiFor, rejectionOf } from "./sdk-helpers.js";

/** Part 4: what the fake records, and how it fails a test that scripted it wrong. */

const open: FakeLLM[] = [];
async function start(options?: FakeLLMOptions): Promise<FakeLLM> {
  const fake = await startFakeLLM(options);
  open.push(fake);
  return fake;
}
afterEach(async () => {
  await Promise.all(open.splice(0).map((f) => f.close()));
});

describe("recording", () => {
  it("records api, path, parsed body, headers and stream flag for every request, in order", async () => {
    const fake = await start();
    fake.enqueue({ text: "a" }, { text: "b" }, { text: "c" });
    await openaiFor(fake).chat.completions.create({ ...CHAT_REQUEST, temperature: 0.2 });
    await anthropicFor(fake).messages.stream(ANTHROPIC_REQUEST).finalMessage();
    await collect(await openaiFor(fake).responses.create({ model: "gpt-5", input: "hi", stream: true }));

    expect(fake.requests.map((r) => [r.api, r.method, r.path, r.stream])).toEqual([
      ["chat", "POST", "/v1/chat/completions", false],
      ["anthropic", "POST", "/v1/messages", true],
      ["responses", "POST", "/v1/responses", true],
    ]);
    const [chat, anthropic] = fake.requests;
    expect(chat?.body).toMatchObject({ model: "gpt-4o-2024-08-06", temperature: 0.2, messages: CHAT_REQUEST.messages });
    expect(chat?.headers["authorization"]).toBe("Bearer sk-test");
    expect(chat?.headers["content-type"]).toBe("application/json");
    // @anthropic-ai/sdk 1.15 sends the key as a bearer token; older versions used x-api-key.
    expect(anthropic?.headers["x-api-key"] ?? anthropic?.headers["authorization"]).toMatch(/sk-ant-test$/);
    expect(anthropic?.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(anthropic?.body).toMatchObject({ max_tokens: 1024, stream: true });
    expect(typeof chat?.at).toBe("number");
    fake.assertDone();
  });

  it("echoes the requested model and gives each response its own id", async () => {
    const fake = await start({ steps: [{ text: "a" }, { text: "b" }] });
    const one = await openaiFor(fake).chat.completions.create({ ...CHAT_REQUEST, model: "qwen-max" });
    const two = await openaiFor(fake).chat.completions.create(CHAT_REQUEST);
    expect(one.model).toBe("qwen-max");
    expect(one.id).not.toBe(two.id);
    fake.assertDone();
  });
});

describe("strictness", () => {
  it("a request with no step queued gets a 500 naming the problem, and assertDone throws", async () => {
    const fake = await start();
    const err = await rejectionOf(openaiFor(fake).chat.completions.create(CHAT_REQUEST));
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as Error).message).toContain("no step queued");
    expect(fake.requests).toHaveLength(1);
    expect(() => fake.assertDone()).toThrow(/unexpected request #1 POST \/v1\/chat\/completions \(chat\): no step queued/);
  });

  it("an unknown path gets a 500 and assertDone throws", async () => {
    const fake = await start();
    const res = await fetch(`${fake.openaiBaseURL}/models`);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("GET /v1/models");
    expect(fake.requests).toHaveLength(0);
    expect(() => fake.assertDone()).toThrow(/GET \/v1\/models: not an endpoint/);
  });

  it("a body that is not JSON is refused and remembered", async () => {
    const fake = await start({ steps: [{ text: "never" }] });
    const res = await fetch(`${fake.openaiBaseURL}/chat/completions`, { method: "POST", body: "{oops" });
    expect(res.status).toBe(500);
    expect(fake.pending()).toBe(1);
    expect(() => fake.assertDone()).toThrow(/body is not JSON.*1 scripted step\(s\) never requested: reply/);
  });

  it("leftover steps make assertDone throw, listing their kinds", async () => {
    const fake = await start();
    fake.enqueue({ text: "used" }, { kind: "error", status: 500, body: {} }, { kind: "hangup" });
    await openaiFor(fake).chat.completions.create(CHAT_REQUEST);
    expect(fake.pending()).toBe(2);
    expect(() => fake.assertDone()).toThrow("2 scripted step(s) never requested: error, hangup");
  });

  it("assertDone passes when every step was consumed and nothing unexpected arrived", async () => {
    const fake = await start({ steps: [{ text: "ok" }] });
    expect(fake.pending()).toBe(1);
    await openaiFor(fake).chat.completions.create(CHAT_REQUEST);
    expect(fake.pending()).toBe(0);
    expect(() => fake.assertDone()).not.toThrow();
  });

  it("steps are consumed in order across APIs", async () => {
    const fake = await start({ steps: [{ text: "first" }, { text: "second" }] });
    const a = await anthropicFor(fake).messages.create(ANTHROPIC_REQUEST);
    const b = await openaiFor(fake).chat.completions.create(CHAT_REQUEST);
    expect(a.content).toEqual([{ type: "text", text: "first" }]);
    expect(b.choices[0]?.message.content).toBe("second");
  });

  it("close() resolves while a stalled stream and a long delay are still pending", async () => {
    const fake = await start({
      steps: [
        { text: "x y z", fault: { type: "stall", afterChunks: 1 } },
        { text: "late", delayMs: 120_000 },
      ],
    });
    const client = openaiFor(fake);
    const stalled = await client.chat.completions.create({ ...CHAT_REQUEST, stream: true });
    const iterator = stalled[Symbol.asyncIterator]();
    await iterator.next();
    const waiting = rejectionOf(iterator.next());
    const delayed = rejectionOf(client.chat.completions.create(CHAT_REQUEST));
    await fake.close();
    expect(await waiting).toBeInstanceOf(Error);
    expect(await delayed).toBeInstanceOf(OpenAI.APIConnectionError);
  });
});

describe("fixtureStep", () => {
  let temp: string | undefined;
  afterEach(async () => {
    if (temp !== undefined) await rm(temp, { recursive: true, force: true });
    temp = undefined;
  });

  it("reads the recorded fixtures from the repository's test/fixtures/llm", () => {
    expect(llmFixturePath("README.md")).toBe(join(fixturesDir(), "llm", "README.md"));
    expect(fixturesDir()).toMatch(/[/\\]test[/\\]fixtures$/);
    expect(fixtureStep("openai-chat-stream-text-usage.sse").body).toContain("chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL");
  });

  it("reads another folder when told, adds a missing final blank line to .sse and converts .chunks.jsonl", async () => {
    temp = await mkdtemp(join(tmpdir(), "fake-llm-fixtures-"));
    const dir = temp;
    await writeFile(join(dir, "x.sse"), 'event: ping\ndata: {"type":"ping"}');
    await writeFile(join(dir, "y.chunks.jsonl"), '{"type":"message_stop"}\n');
    await writeFile(join(dir, "openai-error-503-busy.json"), '{"error":{}}');

    expect(fixtureStep("x.sse", { dir })).toEqual({ kind: "raw", body: 'event: ping\ndata: {"type":"ping"}\n\n', contentType: "text/event-stream" });
    expect(fixtureStep("y.chunks.jsonl", { dir }).body).toBe('event: message_stop\ndata: {"type":"message_stop"}\n\n');
    expect(fixtureStep("openai-error-503-busy.json", { dir })).toMatchObject({ status: 503, contentType: "application/json" });
    expect(fixtureStep("openai-error-503-busy.json", { dir, status: 502, headers: { "retry-after": "1" } })).toMatchObject({
      status: 502,
      headers: { "retry-after": "1" },
    });
  });
});
