import { writeFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { textOf } from "../../src/core/message-helpers.js";
import { createHarness, finalMessages, gateTool, roles, waitFor } from "./helpers.js";
import type { LoopHarness } from "./helpers.js";
import type { TurnReply } from "../../src/agent/turn-processor.js";

let h: LoopHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const repliesTo = (harness: LoopHarness, chatId: string): string[] =>
  finalMessages(harness.outbound)
    .filter((m) => m.chatId === chatId)
    .map((m) => m.content);

describe("AgentLoop over the bus", () => {
  it("answers a chat message with a message whose delivery id is the turn id, and reports tool progress", async () => {
    const gate = gateTool("lookup");
    h = await createHarness({ tools: [gate.tool] });
    gate.release("42 apples");
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "lookup", arguments: { q: "apples" } }] }, { text: "You have 42 apples." });
    await h.send("how many apples?");
    await waitFor(() => finalMessages(h!.outbound).length === 1);
    const reply = finalMessages(h.outbound)[0]!;
    expect(reply).toMatchObject({ kind: "message", channel: "telegram", chatId: "42", content: "You have 42 apples." });
    const turnId = reply.id;
    expect(turnId).toMatch(/^turn/);
    expect(await h.runtime.store().getTurn(turnId)).toMatchObject({ status: "completed", sessionKey: "telegram:42" });
    expect(h.outbound.find((m) => m.kind === "progress")).toMatchObject({ kind: "progress", toolName: "lookup", text: 'lookup({"q":"apples"})' });
    h.fake.assertDone();
  });

  it("runs two sessions in parallel: one finishes while the other waits in a tool", async () => {
    const gate = gateTool();
    h = await createHarness({ tools: [gate.tool] });
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "wait_here", arguments: {} }] });
    await h.send("slow task", { chatId: "A" });
    await gate.started;
    h.fake.enqueue({ text: "B is done" });
    await h.send("quick question", { chatId: "B" });
    await waitFor(() => repliesTo(h!, "B").length === 1);
    expect(repliesTo(h, "B")).toEqual(["B is done"]);
    expect(h.loop.sessionState("telegram:A").running).toBe(true);
    h.fake.enqueue({ text: "A is done" });
    gate.release();
    await waitFor(() => repliesTo(h!, "A").length === 1);
    expect(repliesTo(h, "A")).toEqual(["A is done"]);
    await h.loop.whenIdle();
    expect(h.loop.sessionState("telegram:A")).toEqual({ running: false, queued: 0 });
  });

  it("injects a message that arrives mid-turn into the running turn", async () => {
    const gate = gateTool();
    h = await createHarness({ tools: [gate.tool] });
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "wait_here", arguments: {} }] });
    await h.send("book a table for two");
    await gate.started;
    await h.send("make it at 8pm");
    await waitFor(() => h!.loop.sessionState("telegram:42").queued === 1);
    h.fake.enqueue({ text: "Booked for two at 8pm." });
    gate.release("table free");
    await waitFor(() => finalMessages(h!.outbound).length === 1);
    await h.loop.whenIdle();
    // One turn, one reply: the follow-up went into the second model call after the tool result.
    expect(h.fake.requests).toHaveLength(2);
    expect(roles(h.fake.requests[1]).slice(-3).map(([role, text]) => [role, text.includes("table free") || text.includes("8pm")])).toEqual([
      ["assistant", false],
      ["tool", true],
      ["user", true],
    ]);
    expect(finalMessages(h.outbound).map((m) => m.content)).toEqual(["Booked for two at 8pm."]);
    const stored = await h.runtime.store().loadMessages("telegram:42");
    expect(stored.filter((m) => m.role === "user").map((m) => textOf(m))).toEqual(["book a table for two", "make it at 8pm"]);
    h.fake.assertDone();
  });

  it("merges messages past the queue limit into the last queued one, losing none", async () => {
    const gate = gateTool();
    h = await createHarness({ tools: [gate.tool], loop: { maxQueuePerSession: 2 } });
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "wait_here", arguments: {} }] });
    await h.send("start");
    await gate.started;
    for (const text of ["one", "two", "three", "four"]) await h.send(text);
    await waitFor(() => h!.bus.inboundSize() === 0 && h!.loop.sessionState("telegram:42").queued === 2);
    h.fake.enqueue({ text: "Got all four." });
    gate.release();
    await waitFor(() => finalMessages(h!.outbound).length === 1);
    const users = roles(h.fake.requests[1]).filter(([role]) => role === "user").map(([, text]) => text);
    // The queued messages follow each other on the wire as one user turn (roles alternate).
    expect(users).toEqual(["start", "one\n\ntwo\n\nthree\n\nfour"]);
    h.fake.assertDone();
  });

  it("/stop during a slow tool cancels the turn and answers with the count", async () => {
    const gate = gateTool();
    h = await createHarness({ tools: [gate.tool] });
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "wait_here", arguments: {} }] });
    await h.send("long job");
    await gate.started;
    await h.send("/stop");
    await waitFor(() => finalMessages(h!.outbound).length === 1);
    await h.loop.whenIdle();
    expect(finalMessages(h.outbound).map((m) => m.content)).toEqual(["Stopped 1 task(s)."]);
    expect(h.fake.requests).toHaveLength(1);
    const stored = await h.runtime.store().loadMessages("telegram:42");
    // The user message and the interrupted tool call are kept; no answer was invented.
    expect(stored.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    h.fake.assertDone();
  });

  it("streams deltas and closes the stream with the turn id when the inbound asks for streaming", async () => {
    h = await createHarness();
    h.fake.enqueue({ text: "Hello there friend" });
    await h.send("hi", { metadata: { stream: true } });
    await waitFor(() => h!.outbound.some((m) => m.kind === "stream_end"));
    const deltas = h.outbound.filter((m) => m.kind === "delta").map((m) => (m.kind === "delta" ? m.delta : ""));
    expect(deltas.join("")).toBe("Hello there friend");
    const end = h.outbound.find((m) => m.kind === "stream_end");
    expect(end).toMatchObject({ content: "Hello there friend" });
    expect(end?.kind === "stream_end" && end.id === end.streamId).toBe(true);
    expect(finalMessages(h.outbound)).toHaveLength(0);
  });

  it("names the asking message on every delta, progress and stream_end of a streamed reply", async () => {
    h = await createHarness();
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "message_missing_tool", arguments: {} }] }, { text: "Threaded answer" });
    await h.send("hi", { metadata: { stream: true, messageId: "1700000000.000100" } });
    await waitFor(() => h!.outbound.some((m) => m.kind === "stream_end"));
    const streamed = h.outbound.filter((m) => m.kind === "delta" || m.kind === "stream_end" || m.kind === "progress");
    expect(streamed.map((m) => m.kind)).toContain("progress");
    expect(streamed.map((m) => m.kind)).toContain("delta");
    for (const m of streamed) expect(m).toMatchObject({ replyTo: "1700000000.000100" });
  });

  it("does not send the final reply when the message tool already answered this conversation", async () => {
    h = await createHarness();
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "message", arguments: { content: "Here is your answer (sent by tool)." } }] }, { text: "Done." });
    await h.send("answer via tool");
    await waitFor(() => h!.fake.requests.length === 2);
    await h.loop.whenIdle();
    expect(finalMessages(h.outbound).map((m) => m.content)).toEqual(["Here is your answer (sent by tool)."]);
  });

  it("reports a failing turn as a typed error event and tells the user", async () => {
    h = await createHarness();
    const errors: string[] = [];
    h.loop.onError((e) => errors.push(`${e.type}:${e.sessionKey}`));
    await h.send("hi", { metadata: { agent: "ghost" } });
    await waitFor(() => finalMessages(h!.outbound).length === 1);
    expect(errors).toEqual(["turn_failed:telegram:42"]);
    expect(finalMessages(h.outbound)[0]?.content).toMatch(/^Sorry, I could not answer: unknown agent "ghost"/);
  });
});

describe("AgentLoop.process (direct callers)", () => {
  it("serialises two turns of one session and replays the first in the second", async () => {
    const gate = gateTool();
    h = await createHarness({ tools: [gate.tool], start: false });
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "wait_here", arguments: {} }] });
    const first = h.loop.process({ sessionKey: "cli:x", content: "first" });
    await gate.started;
    const second = h.loop.process({ sessionKey: "cli:x", content: "second" });
    await waitFor(() => h!.loop.sessionState("cli:x").queued === 1);
    expect(h.fake.requests).toHaveLength(1);
    h.fake.enqueue({ text: "first done" }, { text: "second done" });
    gate.release();
    const [a, b] = await Promise.all([first, second]);
    expect([a.content, b.content]).toEqual(["first done", "second done"]);
    expect(roles(h.fake.requests[2]).map(([role]) => role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]);
    h.fake.assertDone();
  });

  it("answers an unknown agent with an error reply naming it (it does not reject)", async () => {
    h = await createHarness({ start: false });
    const reply = await h.loop.process({ sessionKey: "cli:x", content: "hi", agent: "ghost" });
    expect(reply).toMatchObject({ stopReason: "error", error: expect.stringMatching(/unknown agent "ghost"/) });
  });

  it("honours the concurrency gate across sessions", async () => {
    const { harness, gate, a } = await holdOnlySlot();
    const b = harness.loop.process({ sessionKey: "cli:b", content: "b" });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(harness.fake.requests).toHaveLength(1);
    harness.fake.enqueue({ text: "a done" }, { text: "b done" });
    gate.release();
    expect((await a).content).toBe("a done");
    expect((await b).content).toBe("b done");
  });

  it("admits two turns per gate slot: later ones wait before loading history, and a stopped one leaves nothing", async () => {
    const { harness, gate, a } = await holdOnlySlot();
    const store = harness.runtime.store();
    const b = harness.loop.process({ sessionKey: "cli:b", content: "b" });
    const c = harness.loop.process({ sessionKey: "cli:c", content: "c" });
    const stopD = new AbortController();
    const d = harness.loop.process({ sessionKey: "cli:d", content: "d" }, { signal: stopD.signal });
    // b is admitted: its turn is open, its message stored, and it waits for the model slot.
    await waitFor(async () => (await store.loadHistory("cli:b")).length === 1);
    expect(await store.getSession("cli:c")).toBeNull();
    expect(await store.getSession("cli:d")).toBeNull();
    stopD.abort();
    expect(await d).toMatchObject({ stopReason: "aborted" });
    expect(await store.getSession("cli:d")).toBeNull();
    expect(harness.fake.requests).toHaveLength(1);
    harness.fake.enqueue({ text: "a done" }, { text: "b done" }, { text: "c done" });
    gate.release();
    expect([(await a).content, (await b).content, (await c).content]).toEqual(["a done", "b done", "c done"]);
    expect((await store.loadHistory("cli:c")).map((m) => m.role)).toEqual(["user", "assistant"]);
    harness.fake.assertDone();
  });

  it("passes the model slot on after the finishing turn's reply: the next turn's call does not run ahead of it", async () => {
    const gate = gateTool();
    h = await createHarness({ tools: [gate.tool], start: false, loop: { maxConcurrent: 1 } });
    const events: string[] = [];
    // Each model call as the gate lets it through, named by the session's message.
    const runtime = h.runtime;
    const resolve = runtime.resolveAgent.bind(runtime);
    runtime.resolveAgent = async (...args) => {
      const profile = await resolve(...args);
      const inner = profile.model;
      const model = Object.assign(Object.create(inner) as typeof inner, {
        stream: (request: Parameters<typeof inner.stream>[0], signal?: AbortSignal) => {
          const last = request.messages.at(-1);
          events.push(`model call (${last?.role === "user" ? textOf(last) : "after a tool"})`);
          return inner.stream(request, signal);
        },
      });
      return { ...profile, model };
    };
    h.fake.enqueue({ toolCalls: [{ id: "c1", name: "wait_here", arguments: {} }] });
    const a = h.loop.process({ sessionKey: "cli:a", content: "a" }).then((reply) => (events.push(`reply ${reply.content}`), reply));
    await gate.started;
    // b is admitted and waits for the slot that a holds.
    const b = h.loop.process({ sessionKey: "cli:b", content: "b" }).then((reply) => (events.push(`reply ${reply.content}`), reply));
    await waitFor(async () => (await runtime.store().loadHistory("cli:b")).length === 1);
    h.fake.enqueue({ text: "a done" }, { text: "b done" });
    gate.release();
    await Promise.all([a, b]);
    expect(events).toEqual(["model call (a)", "model call (after a tool)", "reply a done", "model call (b)", "reply b done"]);
  });

  it("answers a slash command in another session while the gate is full (commands call no model)", async () => {
    const { harness, gate, a } = await holdOnlySlot();
    const help = await harness.loop.process({ sessionKey: "cli:b", content: "/help" });
    expect(help).toMatchObject({ command: "help", stopReason: "completed" });
    expect(harness.fake.requests).toHaveLength(1);
    harness.fake.enqueue({ text: "a done" });
    gate.release();
    expect((await a).content).toBe("a done");
  });
});

describe("inbound media", () => {
  it("sends an attached image file to the model as an image part", async () => {
    h = await createHarness();
    const png = Buffer.from("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082", "hex");
    const path = `${h.root}/photo.png`;
    await writeFile(path, png);
    h.fake.enqueue({ text: "A tiny image." });
    await h.bus.publishInbound({ id: "m1", channel: "telegram", chatId: "42", senderId: "u", content: "what is this?", media: [{ kind: "image", path }], receivedAt: Date.now() });
    await waitFor(() => finalMessages(h!.outbound).length === 1);
    const last = (h.fake.requests[0]?.body.messages as Array<{ content: Array<{ type: string; image_url?: { url: string }; text?: string }> }>).at(-1);
    expect(last?.content[0]).toEqual({ type: "text", text: "what is this?" });
    expect(last?.content[1]?.image_url?.url).toBe(`data:image/png;base64,${png.toString("base64")}`);
  });
});

/** A loop with a gate of one, whose only slot session `a` holds in a tool until `gate.release()`. */
async function holdOnlySlot(): Promise<{ harness: LoopHarness; gate: ReturnType<typeof gateTool>; a: Promise<TurnReply> }> {
  const gate = gateTool();
  const harness = await createHarness({ tools: [gate.tool], start: false, loop: { maxConcurrent: 1 } });
  h = harness;
  harness.fake.enqueue({ toolCalls: [{ id: "c1", name: "wait_here", arguments: {} }] });
  const a = harness.loop.process({ sessionKey: "cli:a", content: "a" });
  await gate.started;
  return { harness, gate, a };
}
