/**
 * Category 4 (oversized) — a 1 MB user message, through the gateway's AgentLoop, the direct
 * processor and a channel: cut to fit the model's window before it is stored and sent (head and
 * tail kept, a marker counting what was removed), the full text saved where the marker says,
 * the user told, and the session going on without a provider "context too long" loop.
 */
import { readFile } from "node:fs/promises";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import { DirectTurnProcessor } from "../../src/agent/turn-processor.js";
import type { AgentEvent } from "../../src/core/events.js";
import { textOf } from "../../src/core/message-helpers.js";
import { inputTokenLimit } from "../../src/engine/governance/oversized-input.js";
import { sharedTokenEstimator } from "../../src/engine/tokens/estimator.js";
import { startRuntimeGateway } from "../../src/gateway/runtime-gateway.js";
import type { RunningGateway } from "../../src/gateway/runtime-gateway.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { startBusLoop, startRuntime, wireMessages, wireProblems, wireText } from "./helpers.js";
import type { RuntimeFixture } from "./helpers.js";

const KEY = "gw-test-SECRET-oversized-msg-01";
const MB = 1024 * 1024;
/** A small window keeps the numbers readable: one message may use (32,000 − 4,096 − 1,024) / 2 tokens. */
const WINDOW = 32_000;
const MAX_TOKENS = 4_096;
const LIMIT = inputTokenLimit(WINDOW, MAX_TOKENS);
const BUDGET = WINDOW - MAX_TOKENS - 1_024;
const MARKER = /\n\n\[… ([\d,]+) characters removed here: the message was too long for the context window\. The full message is saved at (\S+)\. …\]\n\n/;
const BIG = (() => {
  const head = "BEGIN please summarise the report below. ";
  const tail = " END which figure matters most?";
  const body = "lorem ipsum dolor sit amet, consectetur adipiscing elit 0123456789 ".repeat(Math.ceil(MB / 60));
  return head + body.slice(0, MB - head.length - tail.length) + tail;
})();

let fake: FakeLLM;
let fx: RuntimeFixture;
let loop: AgentLoop | undefined;
let gateway: RunningGateway | undefined;
const figures = { cut: 0, removedChars: 0, requestsWithinBudget: 0 };

beforeEach(async () => {
  fake = await startFakeLLM();
  fx = await startRuntime(fake, {
    defaults: { contextWindowTokens: WINDOW, maxTokens: MAX_TOKENS },
    extra: { gateway: { host: "127.0.0.1", apiKey: KEY } },
  });
});
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await loop?.stop();
  loop = undefined;
  await fx.close();
  await fake.close();
});
afterAll(() => {
  console.log(`bad input (1 MB message): ${figures.cut} messages cut to fit, ${figures.removedChars} characters left out and saved, ${figures.requestsWithinBudget} requests within the prompt budget`);
});

const estimator = sharedTokenEstimator("custom/test-model");

/** What the provider got as the user's message: cut as promised, and the full text on disk. */
async function expectCutToFit(sent: string): Promise<void> {
  const match = MARKER.exec(sent);
  expect(match, "marker in the sent message").not.toBeNull();
  const head = sent.slice(0, match!.index);
  const tail = sent.slice(match!.index + match![0].length);
  const removed = Number(match![1]!.replace(/,/g, ""));
  expect({ headStart: BIG.startsWith(head), tailEnd: BIG.endsWith(tail), accounted: head.length + removed + tail.length }).toEqual({
    headStart: true,
    tailEnd: true,
    accounted: BIG.length,
  });
  expect(head.startsWith("BEGIN please summarise")).toBe(true);
  expect(tail.endsWith("END which figure matters most?")).toBe(true);
  expect(estimator.text(sent)).toBeLessThanOrEqual(LIMIT);
  expect(head.length + tail.length).toBeGreaterThan(LIMIT); // most of the allowance is used (≥ 1 char per token)
  // Nothing lost: the marker names a file holding the whole message.
  const saved = await readFile(match![2]!, "utf8");
  expect(saved.length === BIG.length && saved === BIG).toBe(true);
  figures.cut++;
  figures.removedChars += removed;
}

/** The whole request fits the prompt budget, and is legal. */
function expectRequestFits(index: number): void {
  const messages = wireMessages(fake.requests[index]);
  const tokens = messages.reduce((n, m) => n + estimator.text(wireText(m)), 0);
  expect(tokens, `request ${index} is ~${tokens} tokens`).toBeLessThanOrEqual(BUDGET);
  expect(wireProblems(messages)).toEqual([]);
  figures.requestsWithinBudget++;
}

describe("a 1 MB user message", () => {
  it("through the gateway's AgentLoop: the provider receives it cut to fit, the stored message is the same, the session goes on", async () => {
    loop = new AgentLoop({ runtime: fx.runtime });
    gateway = await startRuntimeGateway(fx.runtime, { port: 0, processor: loop });
    const url = `${gateway.server.url}/v1/chat/completions`;
    const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json", "x-session-id": "big" };
    fake.enqueue({ text: "ok big" }, { text: "ok small" });
    const res = await fetch(url, { method: "POST", headers, body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: BIG }] }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content).toBe("ok big");

    const sent = wireText(wireMessages(fake.requests[0]).at(-1)!);
    await expectCutToFit(sent);
    expectRequestFits(0);
    const stored = await fx.runtime.store().loadMessages("api:big");
    expect(stored[0]?.role).toBe("user");
    expect(textOf(stored[0]!) === sent).toBe(true);

    const next = await fetch(url, { method: "POST", headers, body: JSON.stringify({ model: "nanobot", messages: [{ role: "user", content: "and in one line?" }] }) });
    expect(next.status).toBe(200);
    expectRequestFits(1);
    expect(wireMessages(fake.requests[1]).at(-1)).toMatchObject({ role: "user", content: "and in one line?" });
    fake.assertDone();
  });

  it("AgentLoop.process tells the caller: a warning event and reply.warnings", async () => {
    loop = new AgentLoop({ runtime: fx.runtime });
    const events: AgentEvent[] = [];
    fake.enqueue({ text: "summary" });
    const reply = await loop.process({ sessionKey: "cli:big", content: BIG }, { onEvent: (e) => events.push(e) });
    expect(reply).toMatchObject({ stopReason: "completed", content: "summary" });
    expect(reply.warnings).toHaveLength(1);
    expect(reply.warnings![0]).toMatch(/^Your message was too long for the model \(about [\d,]+ tokens; one message may use [\d,]+\), so [\d,]+ of its 1,048,576 characters were left out/);
    expect(events.filter((e) => e.type === "warning")).toEqual([{ type: "warning", message: reply.warnings![0] }]);
    await expectCutToFit(wireText(wireMessages(fake.requests[0]).at(-1)!));
  });

  it("through the direct processor (scripts, the default gateway): the same cut and warning", async () => {
    fake.enqueue({ text: "direct summary" });
    const reply = await new DirectTurnProcessor(fx.runtime).process({ sessionKey: "direct:big", content: BIG });
    expect(reply).toMatchObject({ stopReason: "completed", content: "direct summary", warnings: [expect.stringMatching(/too long for the model/)] });
    await expectCutToFit(wireText(wireMessages(fake.requests[0]).at(-1)!));
    expectRequestFits(0);
  });

  it("from a channel: the user gets a note before the answer", async () => {
    const started = startBusLoop(fx.runtime);
    const { bus, outbound } = started;
    loop = started.loop;
    fake.enqueue({ text: "channel summary" });
    await bus.publishInbound({ id: "in-big", channel: "telegram", chatId: "9", senderId: "9", content: BIG, receivedAt: Date.now() });
    for (let i = 0; i < 1_000 && outbound.filter((m) => m.kind === "message").length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const messages = outbound.flatMap((m) => (m.kind === "message" ? [m.content] : []));
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatch(/^Note: Your message was too long for the model/);
    expect(messages[1]).toBe("channel summary");
    await expectCutToFit(wireText(wireMessages(fake.requests[0]).at(-1)!));
  });
});
