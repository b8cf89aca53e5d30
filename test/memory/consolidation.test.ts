import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { textOf } from "../../src/core/message-helpers.js";
import { installSpanExporter } from "../../src/core/tracing/tracer.js";
import type { FinishedSpan } from "../../src/core/tracing/tracer.js";
import type { HistoryEntry } from "../../src/memory/history-log.js";
import { createHarness, roles } from "../agent/helpers.js";
import { longConversation, shortConversation } from "../support/conversations.js";
import type { LoopHarness } from "../agent/helpers.js";

let h: LoopHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function historyEntries(workspace: string): Promise<HistoryEntry[]> {
  const text = await readFile(join(workspace, "memory", "history.jsonl"), "utf8");
  return text.trim().split("\n").map((line) => JSON.parse(line) as HistoryEntry);
}

const defaults = { contextWindowTokens: 20_000, maxTokens: 1_000 };

describe("memory consolidation", () => {
  it("summarises the oldest turns into history.jsonl and moves the replay point past them", async () => {
    h = await createHarness({ start: false, defaults });
    await h.runtime.store().appendMessages("cli:long", longConversation());
    h.fake.enqueue({ text: "Summary one: the user listed apples." }, { text: "Summary two: more apples." }, { text: "Fresh answer." });
    const reply = await h.loop.process({ sessionKey: "cli:long", content: "what now?" });
    expect(reply.content).toBe("Fresh answer.");
    h.fake.assertDone();

    // The summariser saw the oldest turns.
    expect(roles(h.fake.requests[0]).at(-1)?.[1]).toMatch(/^\[user\] q0 apple/);
    const entries = await historyEntries(h.workspace);
    expect(entries.map((e) => [e.cursor, e.sessionKey, e.content])).toEqual([
      [1, "cli:long", "Summary one: the user listed apples."],
      [2, "cli:long", "Summary two: more apples."],
    ]);
    expect(entries[0]?.timestamp).toMatch(/^\d{4}-\d\d-\d\dT/);

    // The turn replays only the newer messages, with the summaries in the system prompt.
    const turn = roles(h.fake.requests[2]);
    const replayed = turn.filter(([role]) => role === "user").map(([, text]) => text.split(" ")[0]);
    expect(replayed).toEqual(["q7", "q8", "q9", "what"]);
    expect(turn[0]?.[1]).toContain("Summary one: the user listed apples.");
    const history = await h.runtime.store().loadHistory("cli:long");
    expect(textOf(history[0]!).split(" ")[0]).toBe("q7");
    // Nothing is deleted: the full thread is still readable.
    expect(await h.runtime.store().loadMessages("cli:long")).toHaveLength(22);
  });

  it("traces each summary request as a model call marked consolidation, inside the turn's trace", async () => {
    const spans: FinishedSpan[] = [];
    const uninstall = installSpanExporter({ export: (span) => void spans.push(span), shutdown: async () => undefined });
    try {
      h = await createHarness({ start: false, defaults });
      await h.runtime.store().appendMessages("cli:long", longConversation());
      h.fake.enqueue({ text: "Summary one." }, { text: "Summary two." }, { text: "Fresh answer." });
      await h.loop.process({ sessionKey: "cli:long", content: "what now?" });
      // The turn's span ends just after its reply is handed back.
      await expect.poll(() => spans.some((s) => s.name.startsWith("invoke_agent"))).toBe(true);
    } finally {
      uninstall();
    }
    const turn = spans.find((s) => s.name.startsWith("invoke_agent"));
    const summaries = spans.filter((s) => s.attributes["nanobot.purpose"] === "consolidation");
    expect(summaries).toHaveLength(2);
    for (const span of summaries) {
      expect(span.name).toBe("chat test-model");
      expect(span.attributes["gen_ai.request.max_tokens"]).toBe(1_024);
      expect(span.context.traceId).toBe(turn?.context.traceId);
      expect(span.parentSpanId).toBe(turn?.context.spanId);
    }
    // The turn's own model call carries no purpose.
    expect(spans.filter((s) => s.name.startsWith("chat ") && s.attributes["nanobot.purpose"] === undefined)).toHaveLength(1);
  });

  it("keeps the raw transcript when the summary request fails", async () => {
    h = await createHarness({ start: false, defaults });
    await h.runtime.store().appendMessages("cli:long", longConversation());
    const bad = { kind: "error" as const, status: 400, body: { error: { message: "bad request", type: "invalid_request_error" } } };
    h.fake.enqueue(bad, bad, { text: "Still answering." });
    const reply = await h.loop.process({ sessionKey: "cli:long", content: "go on" });
    expect(reply.content).toBe("Still answering.");
    const entries = await historyEntries(h.workspace);
    expect(entries).toHaveLength(2);
    expect(entries[0]?.content).toMatch(/^\[raw\] \[user\] q0 apple/);
  });

  it("does nothing below the budget", async () => {
    h = await createHarness({ start: false, defaults });
    await h.runtime.store().appendMessages("cli:short", longConversation().slice(0, 4));
    h.fake.enqueue({ text: "ok" });
    await h.loop.process({ sessionKey: "cli:short", content: "hi" });
    expect(h.fake.requests).toHaveLength(1);
    expect(await readFile(join(h.workspace, "memory", "history.jsonl"), "utf8")).toBe("");
  });
});

describe("message cap and idle compaction", () => {
  it("replays only the newest maxMessages, from a user message, without summarising (the Python nanobot's replay cap)", async () => {
    h = await createHarness({ start: false, defaults: { maxMessages: 10 } });
    await h.runtime.store().appendMessages("cli:many", shortConversation(6));
    h.fake.enqueue({ text: "ok" });
    await h.loop.process({ sessionKey: "cli:many", content: "next" });
    // 12 stored messages, far under the token budget: one request, the newest 10 replayed.
    expect(h.fake.requests).toHaveLength(1);
    const turn = roles(h.fake.requests[0]).filter(([role]) => role !== "system");
    expect(turn.map(([, text]) => text)).toEqual(["q1", "a1", "q2", "a2", "q3", "a3", "q4", "a4", "q5", "a5", "next"]);
    expect(await readFile(join(h.workspace, "memory", "history.jsonl"), "utf8")).toBe("");
    // Nothing is dropped from the store: the next turn still replays from the newest ten.
    expect((await h.runtime.store().loadMessages("cli:many")).length).toBe(14);
  });

  it("takes maxMessages 0 as the default of 120, as the Python nanobot does", async () => {
    h = await createHarness({ start: false, defaults: { maxMessages: 0 } });
    await h.runtime.store().appendMessages("cli:zero", shortConversation(6));
    h.fake.enqueue({ text: "ok" });
    await h.loop.process({ sessionKey: "cli:zero", content: "next" });
    expect(roles(h.fake.requests[0]).filter(([role]) => role !== "system")).toHaveLength(13);
  });

  it("compacts an idle session down to its last 8 messages, once", async () => {
    h = await createHarness({ start: false });
    await h.runtime.store().appendMessages("telegram:idle", shortConversation(10));
    expect(await h.loop.compactIdleSessions(Date.now())).toEqual([]);
    h.fake.enqueue({ text: "Idle summary." });
    const later = Date.now() + 16 * 60_000;
    expect(await h.loop.compactIdleSessions(later)).toEqual(["telegram:idle"]);
    const history = await h.runtime.store().loadHistory("telegram:idle");
    expect(history.map((m) => textOf(m))).toEqual(["q6", "a6", "q7", "a7", "q8", "a8", "q9", "a9"]);
    expect((await historyEntries(h.workspace)).map((e) => [e.sessionKey, e.content])).toEqual([["telegram:idle", "Idle summary."]]);
    expect(await h.loop.compactIdleSessions(later + 60_000)).toEqual([]);
    h.fake.assertDone();
  });
});
