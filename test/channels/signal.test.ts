/**
 * Signal specifics beyond the channel kit: the Python keys (`phoneNumber` required, the `dm` /
 * `group` policies, the group context, `attachmentsDir`), phone numbers matched with or without
 * `+`, what goes over signal-cli's JSON-RPC (groupId sends, quotes, data-URI files,
 * updateConfiguration), refusals that are not retried, and a daemon that is not running.
 */
import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import { ChannelManager } from "../../src/channels/channel-manager.js";
import { channelSettingNotes } from "../../src/channels/channel-types.js";
import { defaultChannelFactories } from "../../src/channels/factories.js";
import { SIGNAL_ACCOUNT, SIGNAL_GROUP } from "./helpers/fake-signal.js";
import type { SignalUser } from "./helpers/fake-signal.js";
import { nextInbound, tempHome, waitFor } from "./helpers/harness.js";
import { startSignal } from "./kit/signal-platform.js";
import type { SignalSession } from "./kit/signal-platform.js";

const bob: SignalUser = { number: "+15552220002", uuid: "d2d2d2d2-0000-4000-8000-000000000002", name: "Bob" };
const carol: SignalUser = { number: "+15553330003", uuid: "e3e3e3e3-0000-4000-8000-000000000003", name: "Carol" };

let session: SignalSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

async function start(config: Record<string, unknown>, switches: Record<string, unknown> = {}): Promise<SignalSession> {
  session = await startSignal(config, switches);
  return session;
}

async function startError(config: Record<string, unknown>): Promise<string | undefined> {
  const home = await tempHome();
  try {
    const manager = new ChannelManager({ bus: new InProcessBus(), home: home.dir, channels: { signal: { enabled: true, ...config } }, factories: defaultChannelFactories() });
    const [result] = await manager.startAll();
    await manager.stopAll();
    return result?.error;
  } finally {
    await home.cleanup();
  }
}

describe("signal config", () => {
  it("refuses to start without phoneNumber, naming the key", async () => {
    expect(await startError({ daemonHost: "127.0.0.1", daemonPort: 9 })).toMatch(/^channels\.signal\.phoneNumber: expected the Signal account's phone number/);
  });

  it("names a bad daemonPort", async () => {
    expect(await startError({ phoneNumber: SIGNAL_ACCOUNT, daemonPort: "eighty" })).toMatch(/^channels\.signal\.daemonPort: /);
  });

  it("refuses to start when no daemon answers, saying how to run one", async () => {
    expect(await startError({ phoneNumber: SIGNAL_ACCOUNT, daemonHost: "127.0.0.1", daemonPort: 9 })).toContain(`signal-cli -a ${SIGNAL_ACCOUNT} daemon --http 127.0.0.1:9`);
  });

  it("warns about keys that do nothing as written", () => {
    const notes = channelSettingNotes({ signal: { enabled: true, phoneNumber: SIGNAL_ACCOUNT, groupMessageBufferSize: 5, groupPolicy: "open" } });
    expect(notes).toEqual([expect.stringContaining("channels.signal.groupMessageBufferSize has no effect without channels.signal.group")]);
    const python = channelSettingNotes({ signal: { enabled: true, phoneNumber: SIGNAL_ACCOUNT, group: { enabled: true }, groupPolicy: "open" } });
    expect(python).toEqual([expect.stringContaining("channels.signal.groupPolicy is ignored: channels.signal.group.requireMention decides")]);
  });
});

describe("signal over the daemon", () => {
  it("turns on typing indicators for the account and counts as connected", async () => {
    const s = await start({ allowFrom: [bob.number!] });
    expect(s.fake.calls.find((c) => c.method === "updateConfiguration")?.params).toEqual({ typingIndicators: true });
    expect(s.manager.list()).toEqual([{ name: "signal", type: "signal", enabled: true, connected: true }]);
  });

  it("matches a phone number listed without + and answers at the number", async () => {
    const s = await start({ allowFrom: ["15552220002"] });
    await s.fake.push({ from: bob, text: "hi" });
    const inbound = await nextInbound(s.bus);
    expect(inbound).toMatchObject({ chatId: bob.number, senderId: bob.number, content: "hi" });
    expect(inbound.metadata).toMatchObject({ senderName: "Bob", senderNumber: bob.number });
    await s.bus.publishOutbound({ kind: "message", channel: "signal", chatId: inbound.chatId, id: "r1", content: "hello Bob", replyTo: String(inbound.metadata?.messageId) });
    const send = s.fake.calls.filter((c) => c.method === "send").at(-1)!.params;
    expect(send).toMatchObject({ recipient: [bob.number], message: "hello Bob", quoteTimestamp: inbound.metadata?.timestamp, quoteAuthor: bob.number });
  });

  it("admits a sender listed by UUID", async () => {
    const s = await start({ allowFrom: [bob.uuid] });
    await s.fake.push({ from: bob, text: "by uuid" });
    expect(await nextInbound(s.bus)).toMatchObject({ senderId: bob.uuid, chatId: bob.number, content: "by uuid" });
  });

  it("answers in a group by groupId and strips the bot's mention", async () => {
    const s = await start({ allowFrom: [bob.number!] });
    await s.fake.push({ from: bob, text: "/new", groupId: SIGNAL_GROUP, mentionBot: true });
    const inbound = await nextInbound(s.bus);
    expect(inbound).toMatchObject({ chatId: SIGNAL_GROUP, content: "/new" });
    await s.bus.publishOutbound({ kind: "message", channel: "signal", chatId: SIGNAL_GROUP, id: "g1", content: "fresh start" });
    expect(s.fake.calls.filter((c) => c.method === "send").at(-1)!.params).toEqual({ groupId: SIGNAL_GROUP, message: "fresh start" });
  });

  it("turns Markdown into Signal text styles (UTF-16 ranges), leaving code alone", async () => {
    const s = await start({ allowFrom: [bob.number!] });
    const content = "# Plan\n😀 **bold** then *soft* and `a_b`\n- see [docs](https://example.org)\n```\nx = **y**\n```";
    await s.bus.publishOutbound({ kind: "message", channel: "signal", chatId: bob.number!, id: "md1", content });
    const send = s.fake.calls.filter((c) => c.method === "send").at(-1)!.params;
    expect(send.message).toBe("Plan\n😀 bold then soft and a_b\n• see docs (https://example.org)\nx = **y**");
    // "😀" is two UTF-16 units: "bold" starts at 5 + 3.
    expect(send.textStyle).toEqual(["0:4:BOLD", "8:4:BOLD", "18:4:ITALIC", "27:3:MONOSPACE", "64:9:MONOSPACE"]);
  });

  it("sends files as data URIs with the text", async () => {
    const s = await start({ allowFrom: [bob.number!] });
    const path = `${s.home}/chart.png`;
    await import("node:fs/promises").then((fs) => fs.writeFile(path, "PNG"));
    await s.bus.publishOutbound({ kind: "message", channel: "signal", chatId: bob.number!, id: "f1", content: "chart", media: [{ kind: "image", path, mimeType: "image/png" }] });
    const send = s.fake.calls.filter((c) => c.method === "send").at(-1)!.params;
    expect(send.attachments).toEqual([`data:image/png;filename=chart.png;base64,${Buffer.from("PNG").toString("base64")}`]);
  });

  it("does not retry a send the daemon refused (JSON-RPC error) and reports it", async () => {
    const s = await start({ allowFrom: [bob.number!] }, { sendMaxRetries: 3 });
    await s.bus.publishOutbound({ kind: "message", channel: "signal", chatId: "+10000000000", id: "bad", content: "to nobody" });
    expect(s.waits).toEqual([]);
    expect(s.busErrors).toHaveLength(1);
    expect(String(s.busErrors[0]!.error)).toMatch(/failed after 1 attempt/);
    expect(s.fake.calls.filter((c) => c.method === "send")).toHaveLength(1);
  });

  it("notes an attachment signal-cli did not store where attachmentsDir says", async () => {
    const s = await start({ allowFrom: [bob.number!] });
    s.fake.pushRaw({
      envelope: { sourceNumber: bob.number, sourceUuid: bob.uuid, timestamp: 5, dataMessage: { timestamp: 5, message: "see", attachments: [{ id: "gone.jpg", contentType: "image/jpeg", filename: "pic.jpg" }] } },
    });
    const inbound = await nextInbound(s.bus);
    expect(inbound.content).toBe("see\n[attachment: pic.jpg - not found]");
    expect(inbound.media).toBeUndefined();
  });

  it("ignores receipts, typing notices, reactions and the account's own messages", async () => {
    const s = await start({ allowFrom: ["*"] });
    const envelope = { sourceNumber: bob.number, sourceUuid: bob.uuid, timestamp: 7 };
    s.fake.pushRaw({ envelope: { ...envelope, receiptMessage: { isRead: true, timestamps: [1] } } });
    s.fake.pushRaw({ envelope: { ...envelope, typingMessage: { action: "STARTED" } } });
    s.fake.pushRaw({ envelope: { ...envelope, dataMessage: { timestamp: 8, reaction: { emoji: "👍", targetTimestamp: 1 } } } });
    s.fake.pushRaw({ envelope: { sourceNumber: SIGNAL_ACCOUNT, timestamp: 9, dataMessage: { timestamp: 9, message: "note to self" } } });
    await s.fake.push({ from: bob, text: "real" });
    expect(await nextInbound(s.bus)).toMatchObject({ content: "real" });
    expect(s.bus.inboundSize()).toBe(0);
  });
});

describe("signal with the Python dm / group policies", () => {
  it("dm.enabled false drops direct messages (no pairing code)", async () => {
    const s = await start({ dm: { enabled: false }, group: { enabled: true, policy: "open", requireMention: false } });
    await s.fake.push({ from: bob, text: "hello?" });
    await s.fake.push({ from: bob, text: "in the group", groupId: SIGNAL_GROUP });
    expect(await nextInbound(s.bus)).toMatchObject({ chatId: SIGNAL_GROUP });
    expect(s.fake.messages).toEqual([]);
  });

  it("dm.policy open admits anyone; allowlist admits dm.allowFrom only", async () => {
    const open = await start({ dm: { enabled: true, policy: "open" } });
    await open.fake.push({ from: carol, text: "anyone" });
    expect(await nextInbound(open.bus)).toMatchObject({ senderId: carol.number, content: "anyone" });
    await open.close();
    const listed = await start({ dm: { enabled: true, policy: "allowlist", allowFrom: ["+15552220002"] } });
    await listed.fake.push({ from: carol, text: "me too?" });
    await listed.fake.push({ from: bob, text: "listed" });
    expect(await nextInbound(listed.bus)).toMatchObject({ senderId: bob.number, content: "listed" });
    expect(listed.bus.inboundSize()).toBe(0);
    expect(listed.fake.messages).toEqual([]);
  });

  it("group allowlist: any member of a listed group, with the recent messages as context and the sender's name", async () => {
    const s = await start({ group: { enabled: true, policy: "allowlist", allowFrom: [SIGNAL_GROUP], requireMention: true }, groupMessageBufferSize: 2 });
    await s.fake.push({ from: bob, text: "first", groupId: SIGNAL_GROUP });
    await s.fake.push({ from: carol, text: "second", groupId: SIGNAL_GROUP });
    await s.fake.push({ from: carol, text: "elsewhere", groupId: "T3RoZXItZ3JvdXA=", mentionBot: true });
    await s.fake.push({ from: bob, text: "what did Carol say?", groupId: SIGNAL_GROUP, mentionBot: true });
    const inbound = await nextInbound(s.bus);
    // The buffer holds two messages: "first" has dropped out.
    expect(inbound.content).toBe("[Recent group messages for context:]\nCarol: second\n---\n[Bob]: what did Carol say?");
    expect(inbound).toMatchObject({ chatId: SIGNAL_GROUP, senderId: bob.number });
    expect(s.bus.inboundSize()).toBe(0);
  });

  it("group.enabled false drops group messages", async () => {
    const s = await start({ allowFrom: [bob.number!], group: { enabled: false } });
    await s.fake.push({ from: bob, text: "group", groupId: SIGNAL_GROUP, mentionBot: true });
    await s.fake.push({ from: bob, text: "direct" });
    expect(await nextInbound(s.bus)).toMatchObject({ content: "direct" });
    expect(s.bus.inboundSize()).toBe(0);
  });

  it("copies a received file from attachmentsDir into the media folder", async () => {
    const s = await start({ allowFrom: [bob.number!] });
    await s.fake.push({ from: bob, text: "notes", attachment: { name: "notes.txt", contentType: "text/plain", content: "NOTES" } });
    const inbound = await nextInbound(s.bus);
    expect(inbound.media).toEqual([expect.objectContaining({ kind: "document", name: "notes.txt", mimeType: "text/plain" })]);
    expect(await readFile(inbound.media![0]!.path!, "utf8")).toBe("NOTES");
    await waitFor(() => s.fake.typing.length > 0, "typing");
  });
});
