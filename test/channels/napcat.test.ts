/**
 * NapCat specifics beyond the channel kit: the OneBot v11 handshake (Bearer token,
 * get_login_info), keys of `channels.napcat` (refusals, defaults, warnings, groupPolicy as a
 * probability and per group, welcomeNewMembers, maxImageBytes), CQ-code messages, replies to the
 * bot, group files fetched with get_file, what a reply looks like on the wire, and refused sends
 * — against the loopback fake NapCat.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { channelSettingNotes, unknownChannelTypes } from "../../src/channels/channel-types.js";
import { parseNapcatConfig } from "../../src/channels/napcat/config.js";
import { reconnectDelayMs } from "../../src/channels/napcat/onebot-client.js";
import { parseCQString } from "../../src/channels/napcat/segments.js";
import { NAPCAT_BOT, NAPCAT_GROUP } from "./helpers/fake-napcat.js";
import { nextInbound, waitFor } from "./helpers/harness.js";
import { startNapcat } from "./kit/napcat-platform.js";
import type { NapcatSession } from "./kit/napcat-platform.js";

let session: NapcatSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

const alice = 20001;
const bob = 20003;
const group = `group:${NAPCAT_GROUP}`;

/** Lets the channel handle what the fake sent, then checks nothing reached the agent. */
async function nothingForwarded(s: NapcatSession, count: number): Promise<void> {
  await waitFor(() => s.fake.actions.length >= count, "the channel's work");
  await new Promise((r) => setTimeout(r, 100));
  expect(s.bus.inboundSize()).toBe(0);
}

describe("napcat: connection", () => {
  it("connects with the Bearer token, asks get_login_info and reports connected", async () => {
    session = await startNapcat({ allowFrom: [String(alice)] });
    expect(session.fake.actions[0]).toEqual({ action: "get_login_info", params: {} });
    expect(session.manager.get("napcat")?.status?.()).toEqual({ connected: true });
  });

  it("refuses to start when NapCat refuses the token, naming wsUrl and accessToken", async () => {
    await expect(startNapcat({ accessToken: "wrong" })).rejects.toThrow(/Unexpected server response: 401.*check channels\.napcat\.wsUrl "ws:\/\/127\.0\.0\.1:\d+" and channels\.napcat\.accessToken/);
  });

  it("shows the drop in its status and comes back connected", async () => {
    session = await startNapcat({ allowFrom: [String(alice)] });
    session.fake.dropConnection();
    await waitFor(() => session!.fake.connections() === 2 && session!.manager.get("napcat")!.status!().connected, "the reconnection");
    expect(session.manager.get("napcat")!.status!().lastError).toMatch(/connection closed/);
  });

  it("retries a lost connection at once, then after 5 s, 10 s and every 30 s (the Python nanobot's waits)", () => {
    expect([0, 1, 2, 3, 9].map(reconnectDelayMs)).toEqual([0, 5_000, 10_000, 30_000, 30_000]);
  });
});

describe("napcat: config keys", () => {
  it("reads the Python keys with their defaults", () => {
    expect(parseNapcatConfig({})).toMatchObject({
      wsUrl: "ws://127.0.0.1:3001",
      accessToken: "",
      groupPolicy: "mention",
      groupPolicyOverrides: {},
      welcomeNewMembers: true,
      maxImageBytes: 20 * 1024 * 1024,
    });
    expect(parseNapcatConfig({ groupPolicy: 0.25, groupPolicyOverrides: { "123": "open" } })).toMatchObject({ groupPolicy: 0.25, groupPolicyOverrides: { "123": "open" } });
  });

  it("refuses a missing or wrong wsUrl and a bad groupPolicy, naming the key", () => {
    expect(() => parseNapcatConfig({ wsUrl: "" })).toThrow(/^channels\.napcat\.wsUrl: expected NapCat's OneBot v11 WebSocket address/);
    expect(() => parseNapcatConfig({ wsUrl: "http://127.0.0.1:3001" }, "qqbot")).toThrow(/^channels\.qqbot\.wsUrl: .*got "http:\/\/127\.0\.0\.1:3001"/);
    expect(() => parseNapcatConfig({ groupPolicy: 2 })).toThrow(/^channels\.napcat\.groupPolicy: expected "mention", "open" or a number between 0 and 1/);
    expect(() => parseNapcatConfig({ groupPolicyOverrides: { "1": "sometimes" } })).toThrow(/^channels\.napcat\.groupPolicyOverrides\.1: expected/);
    expect(() => parseNapcatConfig({ maxImageBytes: 0 })).toThrow(/^channels\.napcat\.maxImageBytes: expected a positive integer/);
  });

  it("is a channel type now, and warns that streaming cannot edit", () => {
    expect(unknownChannelTypes({ napcat: { enabled: true } })).toEqual([]);
    expect(channelSettingNotes({ napcat: { enabled: true, streaming: true } })).toEqual([expect.stringMatching(/^channels\.napcat\.streaming cannot show a reply as it grows: OneBot v11 cannot edit/)]);
    expect(channelSettingNotes({ napcat: { enabled: true } })).toEqual([]);
  });
});

describe("napcat: group policy", () => {
  it("answers no unaddressed group message with probability 0, every one with 1", async () => {
    session = await startNapcat({ allowFrom: [String(alice)], groupPolicy: 0 });
    session.fake.userSays({ userId: alice, text: "quiet", messageType: "group" });
    await nothingForwarded(session, 1);
    await session.close();
    session = await startNapcat({ allowFrom: [String(alice)], groupPolicy: 1 });
    session.fake.userSays({ userId: alice, text: "loud", messageType: "group" });
    expect(await nextInbound(session.bus)).toMatchObject({ chatId: group, content: "user20001: loud" });
  });

  it("follows groupPolicyOverrides for the listed group and groupPolicy elsewhere", async () => {
    session = await startNapcat({ allowFrom: [String(alice)], groupPolicy: "mention", groupPolicyOverrides: { "555": "open" } });
    session.fake.userSays({ userId: alice, text: "elsewhere", messageType: "group" });
    session.fake.userSays({ userId: alice, text: "in the open group", messageType: "group", groupId: 555 });
    expect(await nextInbound(session.bus)).toMatchObject({ chatId: "group:555", content: "user20001: in the open group" });
    expect(session.bus.inboundSize()).toBe(0);
  });

  it("counts a reply to a message the bot sent, and not a reply to someone else's", async () => {
    session = await startNapcat({ allowFrom: [String(alice)] });
    await session.bus.publishOutbound({ kind: "message", channel: "napcat", chatId: group, id: "g-1", content: "I said this" });
    const mine = session.fake.sent[0]!.messageId;
    const theirs = session.fake.userSays({ userId: bob, text: "bob speaking", messageType: "group" });
    session.fake.userSays({ userId: alice, text: "to bob", messageType: "group", address: "reply", replyToId: theirs });
    session.fake.userSays({ userId: alice, text: "to the bot", messageType: "group", address: "reply", replyToId: mine });
    const inbound = await nextInbound(session.bus);
    expect(inbound).toMatchObject({ content: "user20001: to the bot", metadata: { replyTo: String(mine), mentioned: true, senderName: "user20001", groupId: String(NAPCAT_GROUP) } });
    expect(session.bus.inboundSize()).toBe(0);
  });
});

describe("napcat: who is speaking", () => {
  it("prefixes a group message with the sender's group card, else nickname; a private message is the text alone", async () => {
    session = await startNapcat({ allowFrom: [String(alice), String(bob)], groupPolicy: "open" });
    session.fake.userSays({ userId: alice, text: "hello all", messageType: "group", card: "Alice (ops)", nickname: "alice_qq" });
    expect(await nextInbound(session.bus)).toMatchObject({ content: "Alice (ops): hello all", metadata: { senderName: "Alice (ops)" } });
    session.fake.userSays({ userId: bob, text: "hi", messageType: "group", nickname: "bobby" });
    expect(await nextInbound(session.bus)).toMatchObject({ content: "bobby: hi", senderId: String(bob) });
    session.fake.userSays({ userId: alice, text: "just us", nickname: "alice_qq" });
    expect(await nextInbound(session.bus)).toMatchObject({ content: "just us", metadata: { senderName: "alice_qq" } });
  });
});

describe("napcat: typing", () => {
  it("shows typing in private chats only (set_input_status has no group form)", async () => {
    session = await startNapcat({ allowFrom: [String(alice)] });
    session.fake.userSays({ userId: alice, text: "in the group", messageType: "group", address: "mention" });
    await nextInbound(session.bus);
    session.fake.userSays({ userId: alice, text: "in private" });
    await nextInbound(session.bus);
    await waitFor(() => session!.fake.typing.length === 1, "the typing indicator");
    expect(session.fake.actions.filter((a) => a.action === "set_input_status").map((a) => a.params)).toEqual([{ user_id: alice, event_type: 1 }]);
  });
});

describe("napcat: message formats", () => {
  it("reads CQ-code strings (messagePostFormat string): the bot's @, others' @ and escapes", async () => {
    session = await startNapcat({ allowFrom: [String(alice)] });
    expect(parseCQString("[CQ:at,qq=1] a&#91;b&#93; &amp; [CQ:face,id=14]")).toEqual([
      { type: "at", data: { qq: "1" } },
      { type: "text", data: { text: " a[b] & " } },
      { type: "face", data: { id: "14" } },
    ]);
    session.fake.userSays({ userId: alice, text: "hi [there], friend", messageType: "group", address: "mention", format: "string" });
    expect(await nextInbound(session.bus)).toMatchObject({ chatId: group, content: "user20001: hi [there], friend", metadata: { mentioned: true } });
  });
});

describe("napcat: the account's own messages", () => {
  it("ignores messages NapCat reports from the bot's own QQ number", async () => {
    session = await startNapcat({ allowFrom: ["*"], groupPolicy: "open" });
    session.fake.userSays({ userId: NAPCAT_BOT.id, text: "my own words", messageType: "group" });
    session.fake.userSays({ userId: alice, text: "someone else", messageType: "group" });
    expect(await nextInbound(session.bus)).toMatchObject({ senderId: String(alice), content: "user20001: someone else" });
    expect(session.bus.inboundSize()).toBe(0);
  });
});

describe("napcat: media in", () => {
  it("fetches a group file without a URL through get_file into the home's media folder", async () => {
    session = await startNapcat({ allowFrom: [String(alice)] });
    session.fake.userSays({ userId: alice, text: "the report", messageType: "group", address: "mention", attachment: { name: "report.pdf", mimeType: "application/pdf", content: "PDF-BYTES", as: "file" } });
    const inbound = await nextInbound(session.bus);
    expect(session.fake.actions.map((a) => a.action)).toContain("get_file");
    expect(inbound.media).toEqual([expect.objectContaining({ kind: "document", name: "report.pdf", mimeType: "application/pdf" })]);
    expect(inbound.media![0]!.path!.startsWith(join(session.home, "media", "napcat"))).toBe(true);
    expect(await readFile(inbound.media![0]!.path!, "utf8")).toBe("PDF-BYTES");
  });

  it("keeps a chat's order while a file is fetched (a later message does not overtake it)", async () => {
    session = await startNapcat({ allowFrom: [String(alice)] });
    session.fake.userSays({ userId: alice, text: "first, with a file", attachment: { name: "notes.txt", mimeType: "text/plain", content: "NOTES", as: "file" } });
    session.fake.userSays({ userId: alice, text: "second" });
    const first = await nextInbound(session.bus);
    expect([first.content, first.media?.[0]?.name]).toEqual(["first, with a file", "notes.txt"]);
    expect((await nextInbound(session.bus)).content).toBe("second");
  });

  it("drops an image larger than maxImageBytes (declared or actual) and keeps the text", async () => {
    session = await startNapcat({ allowFrom: [String(alice)], maxImageBytes: 8 });
    session.fake.userSays({ userId: alice, text: "declared big", attachment: { name: "a.png", mimeType: "image/png", content: "tiny", declaredSize: 10_000 } });
    expect(await nextInbound(session.bus)).toMatchObject({ content: "declared big" });
    session.fake.userSays({ userId: alice, text: "actually big", attachment: { name: "b.png", mimeType: "image/png", content: "0123456789", declaredSize: 1 } });
    const second = await nextInbound(session.bus);
    expect(second.content).toBe("actually big");
    expect(second.media).toBeUndefined();
  });
});

describe("napcat: new members", () => {
  it("tells the agent who joined (welcomeNewMembers, default on) when the member is admitted", async () => {
    session = await startNapcat({ allowFrom: ["*"] });
    session.fake.memberJoins(NAPCAT_GROUP, bob, "Bob");
    expect(await nextInbound(session.bus)).toMatchObject({ chatId: group, senderId: String(bob), content: `[group event] new member Bob joined group ${NAPCAT_GROUP}`, metadata: { event: "group_increase", isDirect: false } });
  });

  it("says nothing with welcomeNewMembers false", async () => {
    session = await startNapcat({ allowFrom: ["*"], welcomeNewMembers: false });
    session.fake.memberJoins(NAPCAT_GROUP, bob, "Bob");
    session.fake.userSays({ userId: alice, text: "next", messageType: "private" });
    expect(await nextInbound(session.bus)).toMatchObject({ content: "next" });
    expect(session.fake.actions.map((a) => a.action)).not.toContain("get_group_member_info");
  });
});

describe("napcat: replies on the wire", () => {
  it("sends send_msg with the quote, the images and the text in one message, and other files alone first", async () => {
    session = await startNapcat({ allowFrom: [String(alice)] });
    const png = join(session.home, "chart.png");
    const pdf = join(session.home, "report.pdf");
    await writeFile(png, "PNG");
    await writeFile(pdf, "PDF");
    await session.bus.publishOutbound({
      kind: "message",
      channel: "napcat",
      chatId: group,
      id: "r-1",
      content: "both attached",
      replyTo: "4242",
      media: [
        { kind: "image", path: png, name: "chart.png" },
        { kind: "document", path: pdf, name: "report.pdf" },
      ],
    });
    const calls = session.fake.actions.filter((a) => a.action === "send_msg").map((a) => a.params);
    expect(calls).toEqual([
      { message_type: "group", group_id: NAPCAT_GROUP, message: [{ type: "file", data: { file: `base64://${Buffer.from("PDF").toString("base64")}`, name: "report.pdf" } }] },
      {
        message_type: "group",
        group_id: NAPCAT_GROUP,
        message: [
          { type: "reply", data: { id: "4242" } },
          { type: "image", data: { file: `base64://${Buffer.from("PNG").toString("base64")}`, name: "chart.png" } },
          { type: "text", data: { text: "both attached" } },
        ],
      },
    ]);
  });

  it("quotes only the first piece of a long reply", async () => {
    session = await startNapcat({ allowFrom: [String(alice)] });
    const content = `${"a ".repeat(1400)}\n\n${"b ".repeat(1400)}\n\n${"c ".repeat(1400)}`;
    await session.bus.publishOutbound({ kind: "message", channel: "napcat", chatId: `private:${alice}`, id: "long", content, replyTo: "77" });
    expect(session.fake.sent.map((m) => m.replyTo)).toEqual(["77", undefined, undefined]);
  });

  it("sends tool progress only with sendProgress", async () => {
    session = await startNapcat({ allowFrom: [String(alice)], sendProgress: true });
    await session.bus.publishOutbound({ kind: "progress", channel: "napcat", chatId: `private:${alice}`, text: "exec: npm test" });
    expect(session.fake.sent.map((m) => m.text)).toEqual(["exec: npm test"]);
  });

  it("does not retry a send NapCat refuses (retcode 1404), and reports it", async () => {
    session = await startNapcat({ allowFrom: [String(alice)] }, { switches: { sendMaxRetries: 3 } });
    session.fake.failNext("send_msg", 1, 1404);
    await session.bus.publishOutbound({ kind: "message", channel: "napcat", chatId: `private:${alice}`, id: "refused", content: "nope" });
    expect(session.waits).toEqual([]);
    expect(session.busErrors).toHaveLength(1);
    expect(session.fake.sent).toEqual([]);
  });

  it("reports a chat id that is neither private: nor group:", async () => {
    session = await startNapcat({ allowFrom: [String(alice)] });
    await session.bus.publishOutbound({ kind: "message", channel: "napcat", chatId: "someone", id: "bad", content: "x" });
    expect(String((session.busErrors[0]?.error as Error | undefined)?.message)).toMatch(/chat id "someone" is neither private:<QQ number> nor group:<group number>/);
  });
});
