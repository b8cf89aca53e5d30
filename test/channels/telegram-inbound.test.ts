import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { handlePairingCommand } from "../../src/channels/access/pairing-command.js";
import { nextInbound, waitFor } from "./helpers/harness.js";
import { startTelegram } from "./helpers/telegram-setup.js";
import type { TelegramSetup } from "./helpers/telegram-setup.js";

let setup: TelegramSetup | undefined;

afterEach(async () => {
  await setup?.close();
  setup = undefined;
});

const alice = { id: 42, username: "alice" };
const mallory = { id: 666, username: "mallory" };

describe("telegram: inbound text → bus → reply", () => {
  it("forwards an allowed user's message and delivers the published reply with sendMessage", async () => {
    setup = await startTelegram({ allowFrom: ["42"] });
    setup.fake.pushMessage({ chatId: 42, from: alice, text: "hello bot" });
    const inbound = await nextInbound(setup.bus);
    expect(inbound).toMatchObject({ channel: "telegram", chatId: "42", senderId: "42", content: "hello bot" });
    expect(inbound.metadata).toMatchObject({ isDirect: true, username: "alice", chatType: "private" });

    await setup.bus.publishOutbound({ kind: "message", id: "d-1", channel: "telegram", chatId: "42", content: "Hi **Alice**" });
    const sent = setup.fake.callsOf("sendMessage");
    expect(sent).toHaveLength(1);
    expect(sent[0]!.params).toMatchObject({ chat_id: 42, text: "Hi <b>Alice</b>", parse_mode: "HTML" });
  });

  it("forwards /commands as text starting with '/'", async () => {
    setup = await startTelegram({ allowFrom: ["*"] });
    setup.fake.pushMessage({ chatId: 42, from: alice, text: "/new", entities: [{ type: "bot_command", offset: 0, length: 4 }] });
    expect((await nextInbound(setup.bus)).content).toBe("/new");
  });

  it("downloads a photo into <home>/media/telegram and attaches it", async () => {
    setup = await startTelegram({ allowFrom: ["*"] });
    setup.fake.addFile("big-photo", "photos/file_7.jpg", "JPEGDATA");
    setup.fake.pushMessage({ chatId: 42, from: alice, text: "look", photo: { fileId: "big-photo", uniqueId: "uniq7" } });
    const inbound = await nextInbound(setup.bus);
    expect(inbound.content).toBe("look");
    expect(inbound.media).toHaveLength(1);
    expect(inbound.media![0]).toMatchObject({ kind: "image", mimeType: "image/jpeg" });
    expect(inbound.media![0]!.path).toBe(`${setup.home}/media/telegram/uniq7.jpg`);
    expect(await readFile(inbound.media![0]!.path!, "utf8")).toBe("JPEGDATA");
  });

  it("downloads a document keeping its extension and mime type", async () => {
    setup = await startTelegram({ allowFrom: ["*"] });
    setup.fake.addFile("doc-1", "documents/file_9", "%PDF-1.4");
    setup.fake.pushMessage({ chatId: 42, from: alice, document: { fileId: "doc-1", uniqueId: "d9", fileName: "report.pdf", mimeType: "application/pdf" } });
    const inbound = await nextInbound(setup.bus);
    expect(inbound.media![0]).toMatchObject({ kind: "document", name: "report.pdf", mimeType: "application/pdf" });
    expect(await readFile(inbound.media![0]!.path!, "utf8")).toBe("%PDF-1.4");
  });
});

describe("telegram: pairing an unknown sender", () => {
  it("sends a code and forwards nothing until the owner approves, then forwards", async () => {
    setup = await startTelegram();
    setup.fake.pushMessage({ chatId: 666, from: mallory, text: "let me in" });
    const codeMessage = await waitFor(() => setup!.fake.messages.find((m) => m.chat_id === "666"), "the pairing code message");
    const code = /code: ([A-Z2-9]{8})/.exec(codeMessage.text)?.[1];
    expect(code).toMatch(/^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{8}$/);
    expect(setup.bus.inboundSize()).toBe(0);

    // A second message while pending gets the same code, still nothing forwarded.
    setup.fake.pushMessage({ chatId: 666, from: mallory, text: "hello?" });
    await waitFor(() => setup!.fake.messages.filter((m) => m.chat_id === "666").length === 2, "the second code message");
    expect(setup.fake.messages[1]!.text).toContain(code!);
    expect(setup.bus.inboundSize()).toBe(0);

    expect(await handlePairingCommand(`approve ${code!.toLowerCase()}`, setup.store)).toBe("approved telegram:666 (@mallory)");
    setup.fake.pushMessage({ chatId: 666, from: mallory, text: "now?" });
    const inbound = await nextInbound(setup.bus);
    expect(inbound).toMatchObject({ senderId: "666", content: "now?" });
  });
});

describe("telegram: allowFrom list", () => {
  it("admits listed ids and @usernames, drops others without a pairing code", async () => {
    setup = await startTelegram({ allowFrom: ["42", "@Carol"] });
    setup.fake.pushMessage({ chatId: 666, from: mallory, text: "not me" });
    setup.fake.pushMessage({ chatId: 7, from: { id: 7, username: "carol" }, text: "carol here" });
    const first = await nextInbound(setup.bus);
    expect(first).toMatchObject({ senderId: "7", content: "carol here" });
    setup.fake.pushMessage({ chatId: 42, from: alice, text: "alice here" });
    expect((await nextInbound(setup.bus)).senderId).toBe("42");
    expect(setup.fake.callsOf("sendMessage")).toHaveLength(0);
    expect(setup.bus.inboundSize()).toBe(0);
  });
});

describe("telegram: group mention rules", () => {
  it("answers in groups only when mentioned, replied to, or commanded by @name", async () => {
    setup = await startTelegram({ allowFrom: ["42"] });
    const group = { chatId: -100, chatType: "supergroup" as const, from: alice };
    setup.fake.pushMessage({ ...group, text: "just chatting" });
    setup.fake.pushMessage({ ...group, text: "hey @nano_bot what's up", entities: [{ type: "mention", offset: 4, length: 9 }] });
    setup.fake.pushMessage({ ...group, text: "@someone_else hi", entities: [{ type: "mention", offset: 0, length: 13 }] });
    setup.fake.pushMessage({ ...group, text: "thanks!", replyToBot: true });
    setup.fake.pushMessage({ ...group, text: "/status@nano_bot", entities: [{ type: "bot_command", offset: 0, length: 16 }] });
    const got = [await nextInbound(setup.bus), await nextInbound(setup.bus), await nextInbound(setup.bus)];
    expect(got.map((m) => m.content)).toEqual(["hey what's up", "thanks!", "/status"]);
    expect(got[0]!.metadata).toMatchObject({ isDirect: false, chatType: "supergroup" });
    expect(setup.bus.inboundSize()).toBe(0);
  });

  it("drops group messages from unknown senders even when they mention the bot (no code sent)", async () => {
    setup = await startTelegram();
    setup.fake.pushMessage({ chatId: -100, chatType: "group", from: mallory, text: "@nano_bot hi", entities: [{ type: "mention", offset: 0, length: 9 }] });
    setup.fake.pushMessage({ chatId: 42, chatType: "private", from: mallory, text: "marker" });
    // The private message is processed after the group one (polling is sequential).
    await waitFor(() => setup!.fake.messages.length === 1, "the pairing reply to the private message");
    expect(setup.fake.messages[0]!.chat_id).toBe("42");
    expect((await setup.store.list()).pending).toHaveLength(1);
    expect(setup.bus.inboundSize()).toBe(0);
  });
});
