/**
 * A turn's warnings (here: the user's message was cut to fit the model's window) reach the
 * user on every HTTP face: the web UI's event stream carries `warning` events, and the OpenAI
 * API adds the non-standard top-level `nanobot_warnings` (the last chunk when streamed), which
 * the official client passes through. A small context window makes a 10 KB message oversized.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { TURN_PROCESSORS, startGatewayFixture } from "./helpers.js";
import type { GatewayFixture } from "./helpers.js";

/** One message may take half of (4,000 − 1,000 − 1,024) tokens: about 988. */
const SMALL_WINDOW = { contextWindowTokens: 4_000, maxTokens: 1_000 };
const BIG = `BEGIN ${"lorem ipsum dolor sit amet ".repeat(400)}END`;
const CUT = /^Your message was too long for the model \(about [\d,]+ tokens; one message may use [\d,]+\), so [\d,]+ of its [\d,]+ characters were left out/;

let fx: GatewayFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const PROCESSORS = TURN_PROCESSORS;

/** Each call in its own session: a cut message in a small window would make the next turn consolidate first. */
const session = (id: string): Record<string, unknown> => ({ session_id: id });

function client(): OpenAI {
  return new OpenAI({ baseURL: `${fx!.url}/v1`, apiKey: "unused", maxRetries: 0 });
}

/** The web UI's chat stream as (event name, data) pairs. */
async function webChat(message: string): Promise<Array<{ event: string; data: Record<string, unknown> }>> {
  const res = await fetch(`${fx!.url}/api/chat`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ message }) });
  expect(res.status).toBe(200);
  return (await res.text())
    .split("\n\n")
    .filter(Boolean)
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event:"))?.slice(6).trim() ?? "";
      const data = lines.find((l) => l.startsWith("data:"))?.slice(5).trim() ?? "{}";
      return { event, data: JSON.parse(data) as Record<string, unknown> };
    });
}

describe.each(PROCESSORS)("turn warnings through %s", (_name, makeProcessor) => {
  const start = (): Promise<GatewayFixture> => startGatewayFixture({ defaults: SMALL_WINDOW, ...(makeProcessor ? { makeProcessor } : {}) });

  it("the web UI's event stream carries the warning, before the answer ends", async () => {
    fx = await start();
    fx.fake.enqueue({ text: "I read the start and the end." });
    const events = await webChat(BIG);
    const warnings = events.filter((e) => e.event === "warning");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.data).toEqual({ type: "warning", message: expect.stringMatching(CUT) as unknown });
    expect(events.at(-1)).toMatchObject({ event: "done", data: { content: "I read the start and the end.", stopReason: "completed" } });
    expect(events.findIndex((e) => e.event === "warning")).toBeLessThan(events.length - 1);
  });

  it("the openai client sees nanobot_warnings on the completion, and on the last chunk when streamed", async () => {
    fx = await start();
    fx.fake.enqueue({ text: "short answer" }, { text: "streamed answer" }, { text: "small talk" });
    const once = await client().chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: BIG }], ...session("once") });
    expect(once.choices[0]?.message.content).toBe("short answer");
    const notes = (once as unknown as { nanobot_warnings?: string[] }).nanobot_warnings;
    expect(notes).toHaveLength(1);
    expect(notes?.[0]).toMatch(CUT);

    const stream = await client().chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: BIG }], stream: true, ...session("streamed") });
    const chunks: Array<OpenAI.ChatCompletionChunk & { nanobot_warnings?: string[] }> = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe("streamed answer");
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.at(-1)?.nanobot_warnings).toEqual([expect.stringMatching(CUT)]);
    expect(chunks.slice(0, -1).some((c) => "nanobot_warnings" in c)).toBe(false);

    // A message that fits: no field at all.
    const small = await client().chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: "hi" }], ...session("small") });
    expect(small.choices[0]?.message.content).toBe("small talk");
    expect("nanobot_warnings" in small).toBe(false);
  });

  it("with include_usage the warnings ride on the usage chunk, the last one", async () => {
    fx = await start();
    fx.fake.enqueue({ text: "ok", usage: { promptTokens: 900, completionTokens: 1 } });
    const stream = await client().chat.completions.create({
      model: "nanobot",
      messages: [{ role: "user", content: BIG }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: Array<OpenAI.ChatCompletionChunk & { nanobot_warnings?: string[] }> = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 900 }, nanobot_warnings: [expect.stringMatching(CUT)] });
    expect(chunks.slice(0, -1).some((c) => "nanobot_warnings" in c)).toBe(false);
  });
});
