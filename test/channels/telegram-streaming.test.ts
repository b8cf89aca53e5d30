import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "./helpers/harness.js";
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
