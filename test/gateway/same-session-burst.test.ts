/**
 * Many requests to one session at once, through either turn processor: each is answered, in
 * its own turn (one after the other), and the stored history is legal — turns of one session
 * never interleave, whether the AgentLoop's lanes or the DirectTurnProcessor runs them.
 */
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { textOf } from "../../src/core/message-helpers.js";
import { historyProblems } from "../../src/session/index.js";
import { TURN_PROCESSORS, startGatewayFixture } from "./helpers.js";
import type { GatewayFixture } from "./helpers.js";

const KEY = "gw-secret-key-burst-0001";
let fx: GatewayFixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe.each(TURN_PROCESSORS)("one session, many requests at once (%s)", (_name, makeProcessor) => {
  it("answers each in its own turn; the history holds every question once, each followed by its answer", async () => {
    fx = await startGatewayFixture({ apiKey: KEY, ...(makeProcessor ? { makeProcessor } : {}) });
    const api = new OpenAI({ baseURL: `${fx.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const n = 12;
    fx.fake.enqueue(...Array.from({ length: n }, (_, i) => ({ text: `answer ${i}`, delayMs: i % 3 })));
    const replies = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        api.chat.completions.create({ model: "nanobot", messages: [{ role: "user", content: `question ${i}` }], session_id: "burst" } as OpenAI.ChatCompletionCreateParamsNonStreaming),
      ),
    );
    expect(new Set(replies.map((r) => r.choices[0]!.message.content)).size).toBe(n);
    const history = await fx.runtime.store().loadMessages("api:burst");
    expect(historyProblems(history)).toEqual([]);
    const lines = history.map((m) => `${m.role}:${textOf(m.content)}`);
    expect(lines.filter((l) => l.startsWith("user:")).sort()).toEqual(Array.from({ length: n }, (_, i) => `user:question ${i}`).sort());
    // Strictly alternating: no turn began before the previous one closed.
    expect(lines.map((l) => l.split(":")[0])).toEqual(Array.from({ length: n }, () => ["user", "assistant"]).flat());
    // Each model call saw all earlier turns: the i-th call carried 2i+1 conversation messages.
    const sizes = fx.fake.requests.map((r) => (r.body.messages as Array<{ role: string }>).filter((m) => m.role === "user" || m.role === "assistant").length);
    expect(sizes).toEqual(Array.from({ length: n }, (_, i) => 2 * i + 1));
  });
});
