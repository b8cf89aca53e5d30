/**
 * Category 1 — provider faults. Each case scripts one fault into the fake LLM, runs a real turn
 * (Runtime + AgentLoop + SQLite store, as the CLI and gateway run it), then checks the documented outcome (retried,
 * failed, compacted), that a failure reads as one clear line, and that the session is left
 * legal: the next turn works and its request carries the user's message with no orphan tool
 * results. Retry waits are scaled to 0 through `NANOBOT_RETRY_SCALE` (the asserted figure is
 * the scheduled `delayMs` of each `retry_wait` event, not elapsed time).
 */
import { writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { AgentLoop } from "../../src/agent/agent-loop.js";
import type { TurnReply } from "../../src/agent/turn-processor.js";
import type { AgentEvent } from "../../src/core/events.js";
import { historyProblems } from "../../src/session/index.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import { fixtureStep } from "../fakes/fixture-step.js";
import type { FakeLLM, FakeStep } from "../fakes/fake-llm-types.js";
import { startRuntime, wireMessages, wireProblems, wireText } from "./helpers.js";
import type { RuntimeFixture } from "./helpers.js";

let fake: FakeLLM;
let fx: RuntimeFixture;
const tally = { cases: 0, retried: 0, tolerated: 0, failed: 0, compacted: 0, recovered: 0 };

beforeEach(async () => {
  fake = await startFakeLLM();
  fx = await startRuntime(fake);
});
afterEach(async () => {
  await fx.close();
  await fake.close();
});
afterAll(() => {
  console.log(
    `provider faults: ${tally.cases} faults, ${tally.retried} retried, ${tally.tolerated} tolerated, ${tally.failed} failed cleanly, ${tally.compacted} compacted, ${tally.recovered} sessions usable after`,
  );
});

interface TurnRun {
  reply: TurnReply;
  events: AgentEvent[];
}

async function turn(content: string, sessionKey = "rel:faults", f: RuntimeFixture = fx): Promise<TurnRun> {
  const events: AgentEvent[] = [];
  const reply = await new AgentLoop({ runtime: f.runtime, createWorkspace: false }).process({ sessionKey, content }, { onEvent: (e) => events.push(e) });
  return { reply, events };
}

function retryDelays(events: AgentEvent[]): number[] {
  return events.flatMap((e) => (e.type === "retry_wait" ? [e.delayMs] : []));
}

/** The next turn works, and what it sends contains `failedText` and is a legal conversation. */
async function assertSessionUsable(failedText: string, sessionKey = "rel:faults", f: RuntimeFixture = fx, llm: FakeLLM = fake): Promise<void> {
  const before = llm.requests.length;
  llm.enqueue({ text: "I am back." });
  const next = await turn("are you still there?", sessionKey, f);
  expect(next.reply).toMatchObject({ content: "I am back.", stopReason: "completed" });
  const sent = wireMessages(llm.requests[before]);
  // Consecutive user turns reach the model merged (the role-alternation net), so look inside them.
  expect(sent.filter((m) => m.role === "user").some((m) => wireText(m).includes(failedText))).toBe(true);
  expect(sent.at(-1)).toMatchObject({ role: "user" });
  expect(wireText(sent.at(-1)!)).toMatch(/are you still there\?$/);
  expect(wireProblems(sent)).toEqual([]);
  expect(historyProblems(await f.runtime.store().loadHistory(sessionKey))).toEqual([]);
  llm.assertDone();
  tally.recovered++;
}

const err = (status: number, message: string, extra: Partial<FakeStep & { kind: "error" }> = {}): FakeStep => ({
  kind: "error",
  status,
  body: { error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", code: null } },
  ...extra,
});

/** Runs a turn whose first attempt(s) fail transiently and then succeed. */
async function expectRetried(steps: FakeStep[], delays: number[], text: string): Promise<void> {
  tally.cases++;
  fake.enqueue(...steps, { text: "recovered answer" });
  const r = await turn(text);
  expect(r.reply).toMatchObject({ content: "recovered answer", stopReason: "completed" });
  expect(r.reply.error).toBeUndefined();
  expect(retryDelays(r.events)).toEqual(delays);
  expect(fake.requests).toHaveLength(steps.length + 1);
  tally.retried++;
  await assertSessionUsable(text);
}

/** Runs a turn that must fail with one readable line matching `reason`. */
async function expectFailed(steps: FakeStep[], reason: RegExp, text: string, attempts = steps.length): Promise<TurnRun> {
  tally.cases++;
  fake.enqueue(...steps);
  const r = await turn(text);
  expect(r.reply.stopReason).toBe("error");
  expect(r.reply.error).toMatch(reason);
  expect(r.reply.error).not.toContain("\n");
  expect(fake.requests).toHaveLength(attempts);
  tally.failed++;
  await assertSessionUsable(text);
  return r;
}

describe("provider faults through a real session turn", () => {
  it("429 with Retry-After: waits what the server asked, then succeeds", async () => {
    await expectRetried([err(429, "Rate limit reached", { headers: { "retry-after": "7" } })], [7_000], "429 with header");
  });

  it("429 without Retry-After: follows the standard schedule (1 s, 2 s)", async () => {
    await expectRetried([err(429, "Rate limit reached for requests"), err(429, "Rate limit reached for requests")], [1_000, 2_000], "429 bare");
  });

  it("the recorded OpenAI 429 (\"try again in 6ms\") is honoured", async () => {
    await expectRetried([fixtureStep("openai-error-429-rate-limit-exceeded.json", { status: 429 })], [6], "429 fixture");
  });

  it("a 429 whose body says invalid_request_error is still a retried rate limit (was final)", async () => {
    await expectRetried([{ kind: "error", status: 429, body: { error: { message: "Too many requests", type: "invalid_request_error", code: null } } }], [1_000], "429 proxy body");
  });

  it("quota 429 is final: no retry, the error says quota", async () => {
    const quota: FakeStep = {
      kind: "error",
      status: 429,
      body: { error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", code: "insufficient_quota" } },
    };
    await expectFailed([quota], /quota/i, "quota please");
  });

  it.each([500, 502, 503, 529])("%i is retried and then succeeds", async (status) => {
    await expectRetried([err(status, `upstream said ${status}`)], [1_000], `status ${status}`);
  });

  it("the recorded 500 and Anthropic 529 bodies are retried", async () => {
    await expectRetried(
      [fixtureStep("openai-error-500-server-error.json", { status: 500 }), fixtureStep("anthropic-error-529-overloaded.json", { status: 529 })],
      [1_000, 2_000],
      "recorded 5xx",
    );
  });

  it("503 four times exhausts the schedule (1, 2, 4 s) and fails with the provider's reason", async () => {
    const r = await expectFailed([1, 2, 3, 4].map(() => err(503, "Service Unavailable")), /503.*Service Unavailable/, "persistently down");
    expect(retryDelays(r.events)).toEqual([1_000, 2_000, 4_000]);
  });

  it("401 is final and says the key was refused", async () => {
    await expectFailed([err(401, "Incorrect API key provided: sk-test-****")], /401.*Incorrect API key/, "auth please");
  });

  it("400 context overflow: compacts the history and retries once", async () => {
    fake.enqueue({ text: "first answer" });
    await turn("an earlier question");
    tally.cases++;
    fake.enqueue(fixtureStep("openai-error-400-context-length-exceeded.json", { status: 400 }), { text: "summary of the earlier talk" }, { text: "fits now" });
    const r = await turn("a question that overflows");
    expect(r.reply).toMatchObject({ content: "fits now", stopReason: "completed" });
    expect(r.events.some((e) => e.type === "compaction" && e.kind === "summary")).toBe(true);
    const retried = wireMessages(fake.requests[3]);
    expect(retried.map(wireText).join("\n")).toContain("summary of the earlier talk");
    // The summary and the question reach the model as one user turn (the role-alternation net).
    expect(retried.at(-1)).toMatchObject({ role: "user", content: expect.stringMatching(/summary of the earlier talk\n\na question that overflows$/) });
    tally.compacted++;
    await assertSessionUsable("a question that overflows");
  });

  it("connection refused: retried on the schedule, then a clear error; the same session works once the provider is back", async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const down = await startRuntime(undefined, { apiBase: `http://127.0.0.1:${port}/v1` });
    try {
      tally.cases++;
      const r = await turn("anyone home?", "rel:refused", down);
      expect(r.reply.stopReason).toBe("error");
      expect(r.reply.error).toMatch(/connect|refused|ECONNREFUSED/i);
      expect(r.reply.error).not.toContain("\n");
      expect(retryDelays(r.events)).toEqual([1_000, 2_000, 4_000]);
      tally.failed++;
      await down.runtime.close();
      // Same state.db, provider back up.
      const up = await startRuntime(fake, { home: down.home });
      try {
        await assertSessionUsable("anyone home?", "rel:refused", up);
      } finally {
        await up.close();
      }
    } finally {
      await down.close();
    }
  });

  it("a connection dropped before any byte is retried", async () => {
    await expectRetried([{ kind: "hangup" }], [1_000], "hangup once");
  });

  it("a connection reset mid-stream after text arrived fails (a retry would duplicate output)", async () => {
    await expectFailed([{ text: "one two three four five six", fault: { type: "cut", afterChunks: 2 } }], /connection lost mid-answer/, "cut me off");
  });

  it("a stalled stream is aborted by the idle limit and retried", async () => {
    tally.cases++;
    fake.enqueue({ text: "slow words here", fault: { type: "stall", afterChunks: 1 } }, { text: "fresh answer" });
    const r = await turn("stall please");
    expect(r.reply).toMatchObject({ content: "fresh answer", stopReason: "completed" });
    expect(r.events.some((e) => e.type === "retry_wait" && /stalled/.test(e.error))).toBe(true);
    tally.retried++;
    await assertSessionUsable("stall please");
  });

  it("a malformed JSON chunk is skipped (logged) and the rest of the answer kept", async () => {
    tally.cases++;
    fake.enqueue({ text: "alpha beta gamma", fault: { type: "malformed_chunk", afterChunks: 1 } });
    const r = await turn("malformed please");
    expect(r.reply.stopReason).toBe("completed");
    expect(r.reply.content).toBe("alpha beta gamma");
    expect(fx.logs.some((l) => l.msg === "skipping a malformed stream event")).toBe(true);
    tally.tolerated++;
    await assertSessionUsable("malformed please");
  });

  it("a stream without [DONE] but with a finish reason is accepted", async () => {
    tally.cases++;
    fake.enqueue({ text: "no terminator", fault: { type: "no_done" } });
    const r = await turn("no done please");
    expect(r.reply).toMatchObject({ content: "no terminator", stopReason: "completed" });
    tally.tolerated++;
    await assertSessionUsable("no done please");
  });

  it("a tool call with broken JSON arguments gets an error result and the model recovers", async () => {
    tally.cases++;
    await writeFile(join(fx.workspace, "notes.txt"), "kiwi\n");
    fake.enqueue({ toolCalls: [{ id: "call_bad", name: "read_file", arguments: '{"path": "notes.txt", "offset": ' }] }, { text: "handled" });
    const r = await turn("read notes with broken args");
    expect(r.reply).toMatchObject({ content: "handled", stopReason: "completed" });
    const second = wireMessages(fake.requests[1]);
    expect(wireProblems(second)).toEqual([]);
    const result = second.find((m) => m.role === "tool");
    expect(result?.tool_call_id).toBe("call_bad");
    expect(wireText(result!)).toMatch(/kiwi|invalid|argument|JSON/i);
    tally.tolerated++;
    await assertSessionUsable("read notes with broken args");
  });
});
