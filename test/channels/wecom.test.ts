/**
 * WeCom specifics beyond the channel kit: the subscription handshake and heartbeat, keys of
 * `channels.wecom` and their refusals, replies on the asking message's frame versus proactive
 * sends, the welcome message, encrypted downloads and chunked uploads, refused commands.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { channelSettingNotes } from "../../src/channels/channel-types.js";
import { parseWecomConfig } from "../../src/channels/wecom/config.js";
import { WECOM_BOT_ID, WECOM_GROUP, WECOM_SECRET } from "./helpers/fake-wecom.js";
import { nextInbound, waitFor } from "./helpers/harness.js";
import { startWecom } from "./kit/wecom-platform.js";
import type { WecomSession } from "./kit/wecom-platform.js";

let session: WecomSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

const alice = { id: "alice.zhang", username: "alice" };
const bob = { id: "bob.wang", username: "bob" };

async function start(config: Record<string, unknown> = {}, switches?: Record<string, unknown>): Promise<WecomSession> {
  session = await startWecom({ allowFrom: [alice.id], ...config }, switches ? { switches } : {});
  return session;
}

describe("wecom: connection", () => {
  it("subscribes with the bot id and secret and reports the channel connected", async () => {
    const s = await start();
    expect(s.fake.frames[0]).toMatchObject({ cmd: "aibot_subscribe", body: { bot_id: WECOM_BOT_ID, secret: WECOM_SECRET } });
    expect(s.manager.list()).toEqual([expect.objectContaining({ name: "wecom", connected: true })]);
  });

  it("fails to start with a wrong secret, naming WeCom's refusal", async () => {
    await expect(start({ secret: "wrong" })).rejects.toThrow(/wecom did not start: .*Authentication failed: invalid bot_id or secret \(code: 40058\)/);
  });

  it("shows the connection lost when WeCom goes away", async () => {
    const s = await start();
    await s.fake.close();
    await waitFor(() => s.manager.list()[0]?.connected === false, "the lost connection");
    expect(s.manager.list()[0]?.lastError).toMatch(/connection closed/);
  });
});

describe("wecom: config", () => {
  it("refuses a channel without botId or secret, naming the key", async () => {
    await expect(start({ botId: undefined })).rejects.toThrow("channels.wecom.botId: expected the AI bot's Bot ID");
    await expect(start({ secret: "" })).rejects.toThrow("channels.wecom.secret: expected the AI bot's Secret");
    expect(() => parseWecomConfig({ botId: "a", secret: "b", welcomeMessage: 3 })).toThrow(/channels\.wecom\.welcomeMessage/);
  });

  it("warns that streaming is not honoured", () => {
    expect(channelSettingNotes({ wecom: { enabled: true, botId: "a", secret: "b", streaming: true } })).toEqual([
      expect.stringMatching(/^channels\.wecom\.streaming is not supported by nanobot's WeCom channel/),
    ]);
  });

  it("welcomeMessage greets an allowed user who opens the chat, and nobody else", async () => {
    const s = await start({ welcomeMessage: "Hi, I am nanobot." });
    s.fake.enterChat(bob);
    s.fake.enterChat(alice);
    await waitFor(() => s.fake.messages.length === 1, "the welcome message");
    expect(s.fake.messages[0]).toMatchObject({ via: "welcome", chatId: alice.id, msgtype: "text", text: "Hi, I am nanobot." });
  });
});

describe("wecom: messages", () => {
  it("answers on the asking message's frame as a finished stream, and proactively where no message was asked", async () => {
    const s = await start();
    const msgId = await s.userSays(alice, "hello", { chat: "dm" });
    const inbound = await nextInbound(s.bus);
    await s.bus.publishOutbound({ kind: "message", channel: "wecom", chatId: alice.id, id: "r-1", content: "hi alice", replyTo: String(inbound.metadata?.messageId) });
    await s.bus.publishOutbound({ kind: "message", channel: "wecom", chatId: "someone.else", id: "r-2", content: "cron says hi" });
    expect(s.fake.messages).toEqual([
      expect.objectContaining({ via: "reply", replyTo: msgId, msgtype: "stream", text: "hi alice", finished: true }),
      expect.objectContaining({ via: "send", chatId: "someone.else", msgtype: "markdown", text: "cron says hi" }),
    ]);
  });

  it("a group message: the group's chat id, the leading @-mention stripped", async () => {
    const s = await start();
    await s.userSays(alice, "status?", { chat: "group", address: "mention" });
    expect(await nextInbound(s.bus)).toMatchObject({ chatId: WECOM_GROUP, content: "status?", metadata: expect.objectContaining({ isDirect: false, chatType: "group" }) });
  });

  it("decrypts a file the user sent and reads a voice message's transcription", async () => {
    const s = await start();
    await s.userSays(alice, "", { chat: "dm" }, { name: "notes.txt", mimeType: "text/plain", content: "NOTES" });
    const file = await nextInbound(s.bus);
    expect(file.content).toBe("[file]");
    expect(file.media).toEqual([expect.objectContaining({ kind: "document", name: "notes.txt" })]);
    s.fake.pushMessage({ from: alice, extra: { msgtype: "voice", voice: { content: "spoken words" } } });
    expect((await nextInbound(s.bus)).content).toBe("[voice] spoken words");
  });

  it("uploads a reply's image in chunks over the socket and sends it as an image", async () => {
    const s = await start();
    await s.userSays(alice, "chart please", { chat: "dm" });
    const inbound = await nextInbound(s.bus);
    const png = join(s.home, "chart.png");
    await writeFile(png, "PNG");
    await s.bus.publishOutbound({ kind: "message", channel: "wecom", chatId: alice.id, id: "m-1", content: "", media: [{ kind: "image", path: png }], replyTo: String(inbound.metadata?.messageId) });
    expect(s.fake.frames.map((f) => f.cmd).filter((c) => c?.startsWith("aibot_upload"))).toEqual(["aibot_upload_media_init", "aibot_upload_media_chunk", "aibot_upload_media_finish"]);
    expect(s.fake.messages).toEqual([expect.objectContaining({ via: "reply", msgtype: "image", files: [{ name: "chart.png", content: "PNG" }] })]);
  });

  it("does not retry a command WeCom refuses for good (errcode 40008)", async () => {
    const s = await start({}, { sendMaxRetries: 3 });
    s.fake.failNextSends(1, 40008);
    await s.bus.publishOutbound({ kind: "message", channel: "wecom", chatId: alice.id, id: "bad-1", content: "x" });
    expect(s.waits).toEqual([]);
    expect(s.busErrors).toHaveLength(1);
  });
});
