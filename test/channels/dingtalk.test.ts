/**
 * DingTalk specifics beyond the channel kit: the stream handshake (ticket, acknowledgements,
 * pings), keys of `channels.dingtalk` and their refusals and warnings, group replies, the
 * access token's life, downloads and uploads.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { channelSettingNotes } from "../../src/channels/channel-types.js";
import { parseDingTalkConfig } from "../../src/channels/dingtalk/config.js";
import { DINGTALK_CLIENT_ID, DINGTALK_CLIENT_SECRET, DINGTALK_GROUP } from "./helpers/fake-dingtalk.js";
import { nextInbound, waitFor } from "./helpers/harness.js";
import { startDingTalk } from "./kit/dingtalk-platform.js";
import type { DingTalkSession } from "./kit/dingtalk-platform.js";

let session: DingTalkSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

const alice = { id: "0211223344556677", username: "alice" };
const bob = { id: "0233445566778899", username: "bob" };
const group = `group:${DINGTALK_GROUP}`;

async function start(config: Record<string, unknown> = {}, switches?: Record<string, unknown>): Promise<DingTalkSession> {
  session = await startDingTalk({ allowFrom: [alice.id, bob.id], ...config }, switches ? { switches } : {});
  return session;
}

describe("dingtalk: stream connection", () => {
  it("asks for a ticket with the app's credentials and a subscription to robot messages, then acknowledges each frame", async () => {
    const s = await start();
    expect(s.fake.tickets()).toBe(1);
    expect(s.fake.subscriptions).toContainEqual({ type: "CALLBACK", topic: "/v1.0/im/bot/messages/get" });
    const ticketRequest = s.fake.requests.find((r) => r.path === "/v1.0/gateway/connections/open");
    expect(ticketRequest?.body).toMatchObject({ clientId: DINGTALK_CLIENT_ID, clientSecret: DINGTALK_CLIENT_SECRET });
    await s.userSays(alice, "hi", { chat: "dm" });
    expect(s.fake.acks).toEqual([expect.objectContaining({ code: 200, messageId: "frame-2" })]);
    expect(s.manager.list()).toEqual([expect.objectContaining({ name: "dingtalk", connected: true })]);
  });

  it("answers the server's ping (through the SDK)", async () => {
    const s = await start();
    const id = s.fake.ping();
    await waitFor(() => s.fake.pongs.find((p) => p.messageId === id), "the ping's answer");
  });

  it("forwards a redelivered message (same msgId) once", async () => {
    const s = await start();
    const extra = { msgId: "msg-repeat" };
    s.fake.pushMessage({ from: alice, text: "once", extra });
    s.fake.pushMessage({ from: alice, text: "once", extra });
    await waitFor(() => s.fake.acks.length === 2, "both acknowledgements");
    expect((await nextInbound(s.bus)).content).toBe("once");
    await s.userSays(alice, "next", { chat: "dm" });
    expect((await nextInbound(s.bus)).content).toBe("next");
  });

  it("fails to start with a wrong client secret, naming the problem", async () => {
    await expect(start({ clientSecret: "wrong" })).rejects.toThrow(/dingtalk did not start: .*stream ticket request failed: HTTP 401/);
  });

  it("shows the connection lost when DingTalk goes away", async () => {
    const s = await start();
    await s.fake.close();
    await waitFor(() => s.manager.list()[0]?.connected === false, "the lost connection");
    await waitFor(() => s.manager.list()[0]?.lastError, "the reason");
  });
});

describe("dingtalk: config", () => {
  it("refuses a channel without clientId or clientSecret, naming the key", async () => {
    await expect(start({ clientId: undefined })).rejects.toThrow("channels.dingtalk.clientId: expected the app's Client ID");
    await expect(start({ clientSecret: "" })).rejects.toThrow("channels.dingtalk.clientSecret: expected the app's Client Secret");
    expect(() => parseDingTalkConfig({ clientId: "a", clientSecret: "b", groupPolicy: "all" })).toThrow(/channels\.dingtalk\.groupPolicy/);
  });

  it("warns about the remote-media redirect keys and streaming, which it does not honour", () => {
    const notes = channelSettingNotes({
      dingtalk: { enabled: true, clientId: "a", clientSecret: "b", allowRemoteMediaRedirects: true, streaming: true },
      quiet: { type: "dingtalk", enabled: true, clientId: "a", clientSecret: "b", remoteMediaRedirectAllowedHosts: [] },
    });
    expect(notes).toEqual([
      expect.stringMatching(/^channels\.dingtalk\.allowRemoteMediaRedirects has no effect in nanobot: .*never downloads a reply's remote media URL/),
      expect.stringMatching(/^channels\.dingtalk\.streaming is not supported .*cannot edit a robot message/),
    ]);
  });

  it("groupUserIsolation gives each group member a session of their own", async () => {
    const s = await start({ groupUserIsolation: true });
    await s.userSays(alice, "mine", { chat: "group", address: "mention" });
    await s.userSays(bob, "mine too", { chat: "group", address: "mention" });
    const [a, b] = [await nextInbound(s.bus), await nextInbound(s.bus)];
    expect([a.chatId, a.sessionKey, b.sessionKey]).toEqual([group, `dingtalk:${group}:${alice.id}`, `dingtalk:${group}:${bob.id}`]);
  });

  it("disablePrivateChat answers a direct message with a notice and forwards only group messages", async () => {
    const s = await start({ disablePrivateChat: true });
    await s.userSays(alice, "private", { chat: "dm" });
    await waitFor(() => s.sent().length === 1, "the notice");
    expect(s.sent()[0]).toMatchObject({ chatId: alice.id, text: expect.stringContaining("group chat") });
    await s.userSays(alice, "in the group", { chat: "group", address: "mention" });
    expect(await nextInbound(s.bus)).toMatchObject({ chatId: group, content: "in the group" });
    expect(s.bus.inboundSize()).toBe(0);
  });
});

describe("dingtalk: replies", () => {
  it("sends group replies through the group send API, headed with the asker's name", async () => {
    const s = await start();
    await s.userSays(alice, "hello group", { chat: "group", address: "mention" });
    const inbound = await nextInbound(s.bus);
    await s.bus.publishOutbound({ kind: "message", channel: "dingtalk", chatId: inbound.chatId, id: "g-1", content: "hi all", replyTo: String(inbound.metadata?.messageId) });
    expect(s.fake.messages).toEqual([
      expect.objectContaining({ chatId: group, via: "groupSend", msgKey: "sampleMarkdown", text: "# @alice\n\nhi all", msgParam: expect.objectContaining({ title: "Nanobot Reply" }) }),
    ]);
  });

  it("with replyToMessage, answers a group message through its session webhook and @s the asker", async () => {
    const s = await start({ replyToMessage: true });
    const msgId = await s.userSays(alice, "question", { chat: "group", address: "mention" });
    const inbound = await nextInbound(s.bus);
    await s.bus.publishOutbound({ kind: "message", channel: "dingtalk", chatId: inbound.chatId, id: "g-2", content: "answer", replyTo: msgId });
    expect(s.fake.messages).toEqual([expect.objectContaining({ via: "sessionWebhook", chatId: group, replyTo: msgId, at: [alice.id], text: "# @alice\n\nanswer" })]);
  });

  it("reads a file message and a voice message's recognised text", async () => {
    const s = await start();
    await s.userSays(alice, "", { chat: "dm" }, { name: "notes.txt", mimeType: "text/plain", content: "NOTES" });
    const file = await nextInbound(s.bus);
    expect(file.content).toBe("[File]");
    expect(file.media).toEqual([expect.objectContaining({ kind: "document", name: "notes.txt", mimeType: "text/plain" })]);
    s.fake.pushMessage({ from: alice, msgtype: "audio", extra: { content: { recognition: "spoken words", downloadCode: "none", duration: 3 } } });
    expect((await nextInbound(s.bus)).content).toBe("spoken words");
  });

  it("uploads an image and sends it as a picture; a remote image URL is sent as is", async () => {
    const s = await start();
    const png = join(s.home, "chart.png");
    await writeFile(png, "PNG");
    await s.bus.publishOutbound({
      kind: "message",
      channel: "dingtalk",
      chatId: alice.id,
      id: "img-1",
      content: "",
      media: [
        { kind: "image", path: png },
        { kind: "image", url: "https://example.com/a.jpg" },
      ],
    });
    expect(s.fake.messages.map((m) => [m.msgKey, m.files])).toEqual([
      ["sampleImageMsg", [{ name: "chart.png", content: "PNG" }]],
      ["sampleImageMsg", [{ name: "https://example.com/a.jpg", content: "" }]],
    ]);
    expect(s.fake.requests.filter((r) => r.path === "/media/upload")).toHaveLength(1);
  });

  it("fetches the access token once and again after DingTalk refuses it", async () => {
    const s = await start();
    for (const id of ["t-1", "t-2"]) await s.bus.publishOutbound({ kind: "message", channel: "dingtalk", chatId: alice.id, id, content: id });
    expect(s.fake.tokensIssued()).toBe(1);
    s.fake.expireTokens();
    await s.bus.publishOutbound({ kind: "message", channel: "dingtalk", chatId: alice.id, id: "t-3", content: "t-3" });
    expect(s.fake.messages.map((m) => m.text)).toEqual(["t-1", "t-2", "t-3"]);
    expect(s.fake.tokensIssued()).toBe(2);
    expect(s.busErrors).toEqual([]);
  });

  it("does not retry a refused send (HTTP 400)", async () => {
    const s = await start({}, { sendMaxRetries: 3 });
    s.fake.failNextSends(1, 400, { code: "invalidParameter", message: "bad" });
    await s.bus.publishOutbound({ kind: "message", channel: "dingtalk", chatId: alice.id, id: "bad-1", content: "x" });
    expect(s.waits).toEqual([]);
    expect(s.busErrors).toHaveLength(1);
  });
});
