import { afterEach, describe, expect, it } from "vitest";
import { nextInbound, waitFor } from "./helpers/harness.js";
import { startTelegram } from "./helpers/telegram-setup.js";
import type { TelegramSetup } from "./helpers/telegram-setup.js";

let setup: TelegramSetup | undefined;

afterEach(async () => {
  await setup?.close();
  setup = undefined;
});

const to = { channel: "telegram", chatId: "42" } as const;

async function delta(s: TelegramSetup, streamId: string, text: string): Promise<void> {
  await s.bus.publishOutbound({ ...to, kind: "delta", streamId, delta: text });
}

describe("telegram: streaming by editing one message", () => {
  it("20 deltas within one second → one sendMessage and at most two edits", async () => {
    setup = await startTelegram();
    const pieces = Array.from({ length: 20 }, (_, i) => `w${i} `);
    for (const piece of pieces) {
      await delta(setup, "s1", piece);
      setup.clock.advance(40);
    }
    await setup.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "s1", id: "reply-1", content: `**done** ${pieces.join("")}`.trim() });
    expect(setup.fake.callsOf("sendMessage")).toHaveLength(1);
    expect(setup.fake.callsOf("editMessageText").length).toBeLessThanOrEqual(2);
    expect(setup.fake.messages).toHaveLength(1);
    expect(setup.fake.messages[0]!.text).toBe(`<b>done</b> ${pieces.join("").trim()}`);
    const lastEdit = setup.fake.callsOf("editMessageText").at(-1)!;
    expect(lastEdit.params).toMatchObject({ parse_mode: "HTML", message_id: setup.fake.messages[0]!.message_id });
  });

  it("edits the preview once per interval while the stream runs", async () => {
    setup = await startTelegram({ streamEditIntervalMs: 1000 });
    await delta(setup, "s2", "Hello");
    await waitFor(() => setup!.fake.messages.length === 1 && setup!.clock.pendingTimers() === 0, "the first preview");
    expect(setup.fake.messages[0]!.text).toBe("Hello");
    await delta(setup, "s2", " wor");
    await delta(setup, "s2", "ld");
    expect(setup.fake.callsOf("editMessageText")).toHaveLength(0);
    setup.clock.advance(1000);
    await waitFor(() => setup!.fake.messages[0]!.edits.length === 1, "the timed edit");
    expect(setup.fake.messages[0]!.edits).toEqual(["Hello world"]);
    await delta(setup, "s2", "!");
    await setup.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "s2", id: "reply-2", content: "Hello world!" });
    expect(setup.fake.callsOf("sendMessage")).toHaveLength(1);
    expect(setup.fake.messages[0]!.edits).toEqual(["Hello world", "Hello world!"]);
  });

  it("a repeated stream_end (resumed turn) changes nothing", async () => {
    setup = await startTelegram();
    await delta(setup, "s3", "partial");
    const end = { ...to, kind: "stream_end" as const, streamId: "s3", id: "reply-3", content: "final answer" };
    await setup.bus.publishOutbound(end);
    await setup.bus.publishOutbound(end);
    expect(setup.fake.callsOf("sendMessage")).toHaveLength(1);
    expect(setup.fake.messages.map((m) => m.text)).toEqual(["final answer"]);
    // A delta that arrives after the end opens no second preview.
    await delta(setup, "s3", "late");
    expect(setup.fake.callsOf("sendMessage")).toHaveLength(1);
  });

  it("a resumed turn that streams the same reply again removes its extra preview", async () => {
    setup = await startTelegram();
    await delta(setup, "s4", "answer");
    await setup.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "s4", id: "reply-4", content: "answer" });
    await delta(setup, "s5", "answer");
    await setup.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "s5", id: "reply-4", content: "answer" });
    expect(setup.fake.callsOf("deleteMessage")).toHaveLength(1);
    expect(setup.fake.callsOf("deleteMessage")[0]!.params.message_id).toBe(setup.fake.messages[1]!.message_id);
  });

  it("a final text over 4096 characters edits the first chunk and sends the rest", async () => {
    setup = await startTelegram();
    await delta(setup, "s6", "start");
    const content = `${"x".repeat(4000)}\n\n${"y".repeat(3000)}`;
    await setup.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "s6", id: "reply-6", content });
    expect(setup.fake.messages.map((m) => [m.text[0], m.text.length])).toEqual([
      ["x", 4000],
      ["y", 3000],
    ]);
  });

  it("with streaming off, deltas are ignored and the reply is sent once at stream_end", async () => {
    setup = await startTelegram({ streaming: false });
    await delta(setup, "s7", "ignored");
    await setup.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "s7", id: "reply-7", content: "whole reply" });
    expect(setup.fake.callsOf("editMessageText")).toHaveLength(0);
    expect(setup.fake.messages.map((m) => m.text)).toEqual(["whole reply"]);
  });
});

describe("telegram: two forum topics streamed at once", () => {
  it("puts each preview in the topic of the message that asked, edited to its final text", async () => {
    setup = await startTelegram({ allowFrom: ["7"], groupPolicy: "open" });
    const s = setup;
    const user = { id: 7, username: "alice" };
    const asked1 = s.fake.pushMessage({ chatId: -100, chatType: "supergroup", from: user, text: "first", topicId: 11 });
    const first = await nextInbound(s.bus);
    const asked2 = s.fake.pushMessage({ chatId: -100, chatType: "supergroup", from: user, text: "second", topicId: 22 });
    const second = await nextInbound(s.bus);
    const group = { channel: "telegram", chatId: "-100" } as const;
    const [r1, r2] = [String(first.metadata?.messageId), String(second.metadata?.messageId)];
    expect([r1, r2]).toEqual([String(asked1), String(asked2)]);
    await s.bus.publishOutbound({ ...group, kind: "delta", streamId: "t1", delta: "One ", replyTo: r1 });
    await s.bus.publishOutbound({ ...group, kind: "delta", streamId: "t2", delta: "Two ", replyTo: r2 });
    await waitFor(() => s.fake.messages.length === 2, "both previews");
    await s.bus.publishOutbound({ ...group, kind: "stream_end", streamId: "t2", id: "t2-final", content: "Two done", replyTo: r2 });
    await s.bus.publishOutbound({ ...group, kind: "stream_end", streamId: "t1", id: "t1-final", content: "One done", replyTo: r1 });
    expect(s.fake.messages.map((m) => [m.text, m.thread_id])).toEqual([
      ["One done", 11],
      ["Two done", 22],
    ]);
  });

  it("sends a non-streamed reply and tool progress to the asking message's topic too", async () => {
    setup = await startTelegram({ allowFrom: ["7"], groupPolicy: "open" }, { switches: { sendProgress: true } });
    const s = setup;
    s.fake.pushMessage({ chatId: -100, chatType: "supergroup", from: { id: 7, username: "alice" }, text: "question", topicId: 33 });
    const asked = await nextInbound(s.bus);
    const replyTo = String(asked.metadata?.messageId);
    await s.bus.publishOutbound({ channel: "telegram", chatId: "-100", kind: "progress", text: "exec: ls", replyTo });
    await s.bus.publishOutbound({ channel: "telegram", chatId: "-100", kind: "message", id: "topic-reply", content: "answer", replyTo });
    expect(s.fake.messages.map((m) => [m.text, m.thread_id, m.reply_to])).toEqual([
      ["exec: ls", 33, undefined],
      ["answer", 33, undefined],
    ]);
  });
});
