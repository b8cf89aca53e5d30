/**
 * A stage that throws (restore, build, command, save) ends the turn with an error reply, never
 * a rejection: the caller gets `stopReason: "error"` and one clear line, the session stays legal
 * with the user's message kept, and the loop goes on answering.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DirectTurnProcessor } from "../../src/agent/turn-processor.js";
import type { TurnProcessor } from "../../src/agent/turn-processor.js";
import { AbortedError } from "../../src/core/errors.js";
import { textOf } from "../../src/core/message-helpers.js";
import { historyProblems } from "../../src/session/index.js";
import { createHarness, finalMessages, roles, waitFor } from "./helpers.js";
import type { LoopHarness } from "./helpers.js";

let h: LoopHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Role and text of every stored message of a session. */
async function stored(harness: LoopHarness, sessionKey: string): Promise<Array<[string, string]>> {
  return (await harness.runtime.store().loadMessages(sessionKey)).map((m) => [m.role, textOf(m)]);
}

/** The session is legal, and the next turn runs and sends what the user said before. */
async function nextTurnSees(harness: LoopHarness, sessionKey: string, earlier: string, processor: TurnProcessor = harness.loop): Promise<void> {
  harness.fake.enqueue({ text: "back on track" });
  const next = await processor.process({ sessionKey, content: "are you there?" });
  expect(next).toMatchObject({ stopReason: "completed", content: "back on track" });
  const sent = roles(harness.fake.requests.at(-1)).map(([, text]) => text);
  expect(sent.some((text) => text.includes(earlier))).toBe(true);
  expect(historyProblems(await harness.runtime.store().loadHistory(sessionKey))).toEqual([]);
}

describe("AgentLoop.process when a stage throws", () => {
  it("restore (an unknown agent): resolves with an error reply and keeps the user's message", async () => {
    h = await createHarness({ start: false });
    const reply = await h.loop.process({ sessionKey: "cli:ghost", content: "hello ghost", agent: "ghost" });
    expect(reply).toMatchObject({ stopReason: "error", content: "", sessionKey: "cli:ghost", errorKind: "config" });
    expect(reply.error).toMatch(/unknown agent "ghost"/);
    expect(reply.error).not.toContain("\n");
    expect(await stored(h, "cli:ghost")).toEqual([
      ["user", "hello ghost"],
      ["assistant", "[Assistant reply unavailable due to model error.]"],
    ]);
    expect(h.fake.requests).toHaveLength(0);
    await nextTurnSees(h, "cli:ghost", "hello ghost");
  });

  it("restore with an oversized message: the message kept is cut to fit like any other", async () => {
    h = await createHarness({ start: false });
    const big = `START ${"lorem ipsum dolor sit amet ".repeat(40_000)} END`;
    const reply = await h.loop.process({ sessionKey: "cli:ghost-big", content: big, agent: "ghost" });
    expect(reply).toMatchObject({ stopReason: "error" });
    const [user] = await h.runtime.store().loadMessages("cli:ghost-big");
    const text = textOf(user!);
    expect({ cut: text.length < big.length / 2, marked: /characters removed here/.test(text), start: text.startsWith("START"), end: text.endsWith("END") }).toEqual({
      cut: true,
      marked: true,
      start: true,
      end: true,
    });
  });

  it("build (an unreadable workspace file): resolves with an error reply, and the turn after the fix sees the message", async () => {
    h = await createHarness({ start: false });
    const historyFile = join(h.workspace, "memory", "history.jsonl");
    await rm(historyFile, { force: true });
    await mkdir(historyFile, { recursive: true });
    const reply = await h.loop.process({ sessionKey: "cli:build", content: "remember the blue door" });
    expect(reply).toMatchObject({ stopReason: "error", errorKind: "internal" });
    expect(reply.error).toMatch(/EISDIR/);
    expect(await stored(h, "cli:build")).toEqual([
      ["user", "remember the blue door"],
      ["assistant", "[Assistant reply unavailable due to model error.]"],
    ]);
    await rm(historyFile, { recursive: true });
    await nextTurnSees(h, "cli:build", "remember the blue door");
  });

  it("command: a failing slash command answers with its error, in the lane and as a priority command", async () => {
    h = await createHarness({ start: false });
    h.loop.commands.register({ name: "explode", description: "fails", run: () => Promise.reject(new Error("the explode command broke\nstack line")) });
    h.loop.commands.register({ name: "urgent", description: "fails at once", priority: true, run: () => Promise.reject(new Error("urgent broke")) });
    const lane = await h.loop.process({ sessionKey: "cli:cmd", content: "/explode now" });
    expect(lane).toMatchObject({ stopReason: "error", error: "the explode command broke" });
    const priority = await h.loop.process({ sessionKey: "cli:cmd", content: "/urgent" });
    expect(priority).toMatchObject({ stopReason: "error", error: "urgent broke", command: "urgent" });
    // Commands never enter the history, failed or not.
    expect(await stored(h, "cli:cmd")).toEqual([]);
    h.fake.enqueue({ text: "fine" });
    expect(await h.loop.process({ sessionKey: "cli:cmd", content: "hi" })).toMatchObject({ stopReason: "completed", content: "fine" });
  });

  it("save (a store write fails after the model answered): an error reply, the turn closed, the next turn works", async () => {
    h = await createHarness({ start: false });
    const store = h.runtime.store();
    const original = store.completeTurn.bind(store);
    let failures = 0;
    store.completeTurn = (...args) => {
      if (failures++ === 0) return Promise.reject(new Error("disk I/O error"));
      return original(...args);
    };
    h.fake.enqueue({ text: "the answer" });
    const reply = await h.loop.process({ sessionKey: "cli:save", content: "what is the answer?" });
    expect(reply).toMatchObject({ stopReason: "error", error: "disk I/O error", turnId: expect.any(String) });
    const turn = await store.getTurn(reply.turnId!);
    expect(turn?.status).not.toBe("pending");
    await nextTurnSees(h, "cli:save", "what is the answer?");
  });
});

describe("AgentLoop over the bus when a stage throws", () => {
  it("tells the user, keeps the message and goes on consuming", async () => {
    h = await createHarness();
    const errors: string[] = [];
    h.loop.onError((e) => errors.push(e.type));
    await h.send("talk to the ghost", { chatId: "7", metadata: { agent: "ghost" } });
    await waitFor(() => finalMessages(h!.outbound).length === 1);
    expect(finalMessages(h.outbound)[0]?.content).toMatch(/^Sorry, I could not answer: unknown agent "ghost"/);
    expect(errors).toEqual(["turn_failed"]);
    h.fake.enqueue({ text: "still here" });
    await h.send("anyone?", { chatId: "7" });
    await waitFor(() => finalMessages(h!.outbound).length === 2);
    expect(finalMessages(h.outbound)[1]?.content).toBe("still here");
    expect((await stored(h, "telegram:7")).map(([role, text]) => `${role}:${text}`)).toEqual([
      "user:talk to the ghost",
      "assistant:[Assistant reply unavailable due to model error.]",
      "user:anyone?",
      "assistant:still here",
    ]);
  });
});

describe("DirectTurnProcessor.process when a stage throws", () => {
  it("restore (an unknown agent): resolves with a configuration error reply and keeps the user's message", async () => {
    h = await createHarness({ start: false });
    const direct = new DirectTurnProcessor(h.runtime);
    const reply = await direct.process({ sessionKey: "cli:d-ghost", content: "hello ghost", agent: "ghost" });
    expect(reply).toMatchObject({ stopReason: "error", content: "", sessionKey: "cli:d-ghost", errorKind: "config" });
    expect(reply.error).toMatch(/unknown agent "ghost"/);
    expect(reply.error).not.toContain("\n");
    expect(await stored(h, "cli:d-ghost")).toEqual([
      ["user", "hello ghost"],
      ["assistant", "[Assistant reply unavailable due to model error.]"],
    ]);
    expect(h.fake.requests).toHaveLength(0);
    await nextTurnSees(h, "cli:d-ghost", "hello ghost", direct);
  });

  it("after the turn began (the history read fails): an internal error reply with the turn's id, the turn closed once", async () => {
    h = await createHarness({ start: false });
    const direct = new DirectTurnProcessor(h.runtime);
    const store = h.runtime.store();
    const original = store.loadHistory.bind(store);
    let failures = 0;
    store.loadHistory = (...args) => (failures++ === 0 ? Promise.reject(new Error("database disk image is malformed\nat sqlite")) : original(...args));
    const reply = await direct.process({ sessionKey: "cli:d-load", content: "keep this question" });
    expect(reply).toMatchObject({ stopReason: "error", error: "database disk image is malformed", errorKind: "internal", turnId: expect.any(String) });
    expect((await store.getTurn(reply.turnId!))?.status).not.toBe("pending");
    // Closed once: one user message and one marker, not a second copy from settling.
    expect(await stored(h, "cli:d-load")).toEqual([
      ["user", "keep this question"],
      ["assistant", "[Assistant reply unavailable due to model error.]"],
    ]);
    await nextTurnSees(h, "cli:d-load", "keep this question", direct);
  });

  it("a stopped caller gets a stopped reply, and nothing is kept for a turn that never began", async () => {
    h = await createHarness({ start: false });
    const direct = new DirectTurnProcessor(h.runtime);
    h.runtime.resolveAgent = () => Promise.reject(new AbortedError("stopped while loading the agent"));
    const abort = new AbortController();
    abort.abort();
    const reply = await direct.process({ sessionKey: "cli:d-stop", content: "never mind" }, { signal: abort.signal });
    expect(reply).toMatchObject({ stopReason: "aborted", content: "" });
    expect(reply.error).toBeUndefined();
    expect(await stored(h, "cli:d-stop")).toEqual([]);
  });

  it("a provider that refuses the request is an engine-ended error of kind provider", async () => {
    h = await createHarness({ start: false });
    h.fake.enqueue({ kind: "error", status: 401, body: { error: { message: "invalid api key", type: "invalid_request_error", param: null, code: "invalid_api_key" } } });
    const reply = await new DirectTurnProcessor(h.runtime).process({ sessionKey: "cli:d-auth", content: "hi" });
    expect(reply).toMatchObject({ stopReason: "error", errorKind: "provider" });
    expect(reply.error).toMatch(/invalid api key/);
  });
});
