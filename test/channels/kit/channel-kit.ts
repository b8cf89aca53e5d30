/**
 * The shared channel test kit: the behaviour every chat channel owes its users, run against the
 * channel's loopback platform fake through a small adapter (`KitPlatform`). A channel's test file
 * is one line: `runChannelKit(platform)`.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { OutboundMessage } from "../../../src/bus/types.js";
import { handlePairingCommand } from "../../../src/channels/access/pairing-command.js";
import { nextInbound, waitFor } from "../helpers/harness.js";
import type { KitPlatform, KitSession, KitUser } from "./kit-types.js";
import { runScheduledKit } from "./scheduled-kit.js";

export function runChannelKit(platform: KitPlatform): void {
  const { alice, mallory } = platform.users;
  const inGroup = (user: KitUser, text: string): string => platform.groupContent?.(user, text) ?? text;
  let session: KitSession | undefined;

  afterEach(async () => {
    await session?.close();
    session = undefined;
  });

  async function start(config: Record<string, unknown> = {}, switches?: Record<string, unknown>): Promise<KitSession> {
    session = await platform.start(config, switches ? { switches } : {});
    return session;
  }

  function reply(s: KitSession, chatId: string, fields: Partial<Extract<OutboundMessage, { kind: "message" }>> & { id: string; content: string }): Promise<void> {
    return s.bus.publishOutbound({ kind: "message", channel: platform.channel, chatId, ...fields });
  }

  describe(`${platform.channel} kit: direct messages`, () => {
    it("forwards an allowed user's direct message and delivers the reply to the same chat", async () => {
      const s = await start({ allowFrom: [alice.id] });
      await s.userSays(alice, "hello bot", { chat: "dm" });
      const inbound = await nextInbound(s.bus);
      expect(inbound).toMatchObject({ channel: platform.channel, chatId: s.dmChat(alice), senderId: alice.id, content: "hello bot" });
      expect(inbound.metadata).toMatchObject({ isDirect: true });
      await reply(s, inbound.chatId, { id: "dm-1", content: "hello human" });
      expect(s.sent().map((m) => [m.chatId, m.text])).toEqual([[s.dmChat(alice), "hello human"]]);
    });

    it("forwards /stop as a command for the agent layer", async () => {
      const s = await start({ allowFrom: [alice.id] });
      await s.userSays(alice, "/stop", { chat: "dm" });
      expect((await nextInbound(s.bus)).content).toBe("/stop");
    });
  });

  describe(`${platform.channel} kit: groups`, () => {
    if (platform.groups !== undefined && platform.groups !== true) {
      it(`forwards no group message (${platform.groups})`, async () => {
        const s = await start({ allowFrom: [alice.id] });
        await s.userSays(alice, "in the group", { chat: "group", address: "mention" });
        await s.userSays(alice, "direct", { chat: "dm" });
        expect(await nextInbound(s.bus)).toMatchObject({ chatId: s.dmChat(alice), content: "direct" });
        expect(s.bus.inboundSize()).toBe(0);
        expect(s.sent()).toEqual([]);
      });
      return;
    }

    it("with groupPolicy mention, answers only when mentioned or replied to", async () => {
      const s = await start({ allowFrom: [alice.id], groupPolicy: "mention" });
      await s.userSays(alice, "just chatting", { chat: "group", address: "none" });
      await s.userSays(alice, "what's up", { chat: "group", address: "mention" });
      await s.userSays(alice, "thanks", { chat: "group", address: "reply" });
      const got = [await nextInbound(s.bus, "the mention"), await nextInbound(s.bus, "the reply")];
      expect(got.map((m) => [m.chatId, m.content, m.metadata?.isDirect])).toEqual([
        [s.groupChat, inGroup(alice, "what's up"), false],
        [s.groupChat, inGroup(alice, "thanks"), false],
      ]);
      expect(s.bus.inboundSize()).toBe(0);
    });

    it("with groupPolicy open, answers every group message", async () => {
      const s = await start({ allowFrom: [alice.id], groupPolicy: "open" });
      await s.userSays(alice, "just chatting", { chat: "group", address: "none" });
      expect(await nextInbound(s.bus)).toMatchObject({ chatId: s.groupChat, content: inGroup(alice, "just chatting") });
    });
  });

  describe(`${platform.channel} kit: allowFrom and pairing`, () => {
    it("gives an unknown sender a pairing code, forwards nothing until the owner approves, then forwards", async () => {
      const s = await start();
      await s.userSays(mallory, "let me in", { chat: "dm" });
      const codeMessage = await waitFor(() => s.sent().find((m) => m.chatId === s.dmChat(mallory)), "the pairing code");
      const code = /code: ([A-Z2-9]{8})/.exec(codeMessage.text)?.[1];
      expect(code).toMatch(/^[A-Z2-9]{8}$/);
      expect(s.bus.inboundSize()).toBe(0);
      expect(await handlePairingCommand(`approve ${code!}`, s.store)).toMatch(new RegExp(`^approved ${platform.channel}:${mallory.id}`));
      await s.userSays(mallory, "now?", { chat: "dm" });
      expect(await nextInbound(s.bus)).toMatchObject({ senderId: mallory.id, content: "now?" });
    });

    it("with an allowFrom list, drops others without a code", async () => {
      const s = await start({ allowFrom: [alice.id] });
      await s.userSays(mallory, "not me", { chat: "dm" });
      await s.userSays(alice, "me", { chat: "dm" });
      expect(await nextInbound(s.bus)).toMatchObject({ senderId: alice.id, content: "me" });
      expect(s.sent()).toEqual([]);
      expect(s.bus.inboundSize()).toBe(0);
    });
  });

  describe(`${platform.channel} kit: streaming`, () => {
    it(platform.edits ? "previews a streamed reply in one message, edited to the final text" : "sends a streamed reply once, at its end", async () => {
      const s = await start({ allowFrom: [alice.id], streaming: true });
      const to = { channel: platform.channel, chatId: s.dmChat(alice) };
      await s.bus.publishOutbound({ ...to, kind: "delta", streamId: "st-1", delta: "Hel" });
      if (platform.edits) await waitFor(() => s.sent().length === 1, "the first preview");
      await s.bus.publishOutbound({ ...to, kind: "delta", streamId: "st-1", delta: "lo wor" });
      s.clock.advance(5_000);
      if (platform.edits) await waitFor(() => s.sent()[0]!.edits.length >= 1, "the timed edit");
      await s.bus.publishOutbound({ ...to, kind: "delta", streamId: "st-1", delta: "ld" });
      await s.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "st-1", id: "st-reply", content: "Hello world, done." });
      const sent = s.sent();
      expect(sent.map((m) => m.text)).toEqual(["Hello world, done."]);
      if (platform.edits) expect(sent[0]!.edits.at(-1)).toBe("Hello world, done.");
      else expect(sent[0]!.edits).toEqual([]);
    });

    it("with streaming off, ignores deltas and sends the reply once", async () => {
      const s = await start({ allowFrom: [alice.id], streaming: false });
      const to = { channel: platform.channel, chatId: s.dmChat(alice) };
      await s.bus.publishOutbound({ ...to, kind: "delta", streamId: "st-2", delta: "ignored" });
      await s.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "st-2", id: "st-reply-2", content: "whole reply" });
      expect(s.sent().map((m) => [m.text, m.edits.length])).toEqual([["whole reply", 0]]);
    });
  });

  describe(`${platform.channel} kit: typing`, () => {
    const works = platform.typing === true;
    it(works ? "shows typing from the forwarded message until the reply is sent" : `sends no typing indicator (${String(platform.typing)})`, async () => {
      const s = await start({ allowFrom: [alice.id] });
      await s.userSays(alice, "think hard", { chat: "dm" });
      const inbound = await nextInbound(s.bus);
      if (!works) {
        await reply(s, inbound.chatId, { id: "typing-0", content: "done" });
        expect(s.typing()).toEqual([]);
        return;
      }
      await waitFor(() => s.typing().length === 1, "the typing indicator");
      expect(s.typing()).toEqual([s.dmChat(alice)]);
      s.clock.advance(platform.typingRefreshMs ?? 4000);
      await waitFor(() => s.typing().length === 2, "the refreshed typing indicator");
      await reply(s, inbound.chatId, { id: "typing-1", content: "done" });
      s.clock.advance(60_000);
      await new Promise((r) => setTimeout(r, 50));
      expect(s.typing()).toHaveLength(2);
    });
  });

  describe(`${platform.channel} kit: media`, () => {
    it("downloads an image the user sent into the home's media folder and hands it to the model as an image", async () => {
      const s = await start({ allowFrom: [alice.id] });
      await s.userSays(alice, "look at this", { chat: "dm" }, { name: "cat.png", mimeType: "image/png", content: "PNG-BYTES" });
      const inbound = await nextInbound(s.bus);
      expect(inbound.content).toContain("look at this");
      expect(inbound.media).toHaveLength(1);
      expect(inbound.media![0]!.kind).toBe("image");
      expect(inbound.media![0]!.path!.startsWith(join(s.home, "media", platform.channel))).toBe(true);
      expect(await readFile(inbound.media![0]!.path!, "utf8")).toBe("PNG-BYTES");
    });

    it("uploads the files of a reply", async () => {
      const s = await start({ allowFrom: [alice.id] });
      const pdf = join(s.home, "report.pdf");
      await writeFile(pdf, "PDF-BYTES");
      await reply(s, s.dmChat(alice), { id: "media-1", content: "here it is", media: [{ kind: "document", path: pdf, name: "report.pdf" }] });
      // Some platforms take the file only after the user agreed (Teams' file consent in a personal chat).
      await waitFor(() => s.sent().some((m) => m.files.length > 0), "the uploaded file");
      const files = s.sent().flatMap((m) => m.files);
      expect(files).toEqual([{ name: "report.pdf", content: "PDF-BYTES" }]);
      expect(s.sent().map((m) => m.text)).toContain("here it is");
    });
  });

  describe(`${platform.channel} kit: long replies`, () => {
    it(`splits at ${platform.textLimit} characters without breaking a code block`, async () => {
      const s = await start({ allowFrom: [alice.id] });
      const code = Array.from({ length: 40 }, (_, i) => `console.log("line ${i}");`).join("\n");
      const words = Math.ceil(platform.textLimit / 10);
      const paragraph = (i: number): string => `Paragraph ${i} ${"word ".repeat(words)}`.trim();
      const content = [paragraph(0), paragraph(1), "```js\n" + code + "\n```", paragraph(2), paragraph(3)].join("\n\n");
      expect(content.length).toBeGreaterThan(platform.textLimit * 2);
      await reply(s, s.dmChat(alice), { id: "long-1", content });
      const texts = s.sent().map((m) => m.text);
      expect(texts.length).toBeGreaterThanOrEqual(3);
      for (const text of texts) {
        expect(text.length).toBeLessThanOrEqual(platform.textLimit);
        expect(platform.codeBlocksClosed(text)).toBe(true);
      }
      const withCode = texts.filter((t) => t.includes("console.log"));
      expect(withCode).toHaveLength(1);
      expect(withCode[0]!.match(/line \d+/g)).toHaveLength(40);
      expect(texts.join(" ")).toContain("Paragraph 3");
    });
  });

  describe(`${platform.channel} kit: threaded replies`, () => {
    it("replies to the message that asked (replyTo = the inbound messageId)", async () => {
      const s = await start({ allowFrom: [alice.id], ...platform.replyConfig });
      const platformId = await s.userSays(alice, "question", { chat: "dm" });
      const inbound = await nextInbound(s.bus);
      // The agent layer threads its reply to `metadata.messageId` when it is a string.
      const messageId = inbound.metadata?.messageId;
      expect(messageId).toBe(platformId);
      await reply(s, inbound.chatId, { id: "thread-1", content: "answer", replyTo: String(messageId) });
      expect(s.sent().map((m) => [m.text, m.replyTo])).toEqual([["answer", platformId]]);
    });
  });

  describe(`${platform.channel} kit: streamed replies to two messages at once`, () => {
    it("sends each streamed reply, edited to its final text, to the message that asked", async () => {
      const s = await start({ allowFrom: [alice.id], streaming: true, ...platform.replyConfig });
      const firstId = await s.userSays(alice, "first question", { chat: "dm" });
      const first = await nextInbound(s.bus);
      const secondId = await s.userSays(alice, "second question", { chat: "dm" });
      const second = await nextInbound(s.bus);
      const to = { channel: platform.channel, chatId: first.chatId };
      // Deltas and stream ends name the asking message (`replyTo`), as the agent layer sends them.
      const [toFirst, toSecond] = [String(first.metadata?.messageId), String(second.metadata?.messageId)];
      await s.bus.publishOutbound({ ...to, kind: "delta", streamId: "st-a", delta: "First ", replyTo: toFirst });
      await s.bus.publishOutbound({ ...to, kind: "delta", streamId: "st-b", delta: "Second ", replyTo: toSecond });
      if (platform.edits) await waitFor(() => s.sent().length === 2, "both previews");
      await s.bus.publishOutbound({ ...to, kind: "delta", streamId: "st-a", delta: "answer", replyTo: toFirst });
      await s.bus.publishOutbound({ ...to, kind: "delta", streamId: "st-b", delta: "answer", replyTo: toSecond });
      await s.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "st-b", id: "st-b-reply", content: "Second answer, done.", replyTo: toSecond });
      await s.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "st-a", id: "st-a-reply", content: "First answer, done.", replyTo: toFirst });
      const sent = s.sent().map((m) => [m.text, m.replyTo]);
      expect(sent.sort((x, y) => String(x[0]).localeCompare(String(y[0])))).toEqual([
        ["First answer, done.", firstId],
        ["Second answer, done.", secondId],
      ]);
    });
  });

  describe(`${platform.channel} kit: retries`, () => {
    it("retries a failing send up to sendMaxRetries attempts and delivers it once", async () => {
      const s = await start({ allowFrom: [alice.id] }, { sendMaxRetries: 3 });
      s.failNextSends(2);
      await reply(s, s.dmChat(alice), { id: "retry-1", content: "eventually" });
      expect(s.sent().map((m) => m.text)).toEqual(["eventually"]);
      expect(s.waits).toEqual([1000, 2000]);
      expect(s.busErrors).toEqual([]);
    });

    it("reports the failure once sendMaxRetries attempts are used up", async () => {
      const s = await start({ allowFrom: [alice.id] }, { sendMaxRetries: 2 });
      s.failNextSends(2);
      await reply(s, s.dmChat(alice), { id: "retry-2", content: "never" });
      expect(s.sent()).toEqual([]);
      expect(s.waits).toEqual([1000]);
      expect(s.busErrors).toHaveLength(1);
    });
  });

  describe(`${platform.channel} kit: reconnect`, () => {
    it("reconnects after the platform connection drops and keeps receiving", async () => {
      const s = await start({ allowFrom: [alice.id] });
      await s.userSays(alice, "before", { chat: "dm" });
      expect((await nextInbound(s.bus)).content).toBe("before");
      const before = s.connections();
      await s.dropConnection();
      await waitFor(() => s.connections() > before, "the reconnection", 15_000);
      await s.userSays(alice, "after", { chat: "dm" });
      expect((await nextInbound(s.bus, "the message after the drop", 15_000)).content).toBe("after");
    }, 30_000);
  });

  runScheduledKit(platform);
}
