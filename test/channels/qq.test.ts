/**
 * QQ specifics beyond the channel kit: the access token and gateway handshake, resume after a
 * drop, keys of `channels.qq` (refusals, warnings, ackMessage, msgFormat, groupPolicy), passive
 * replies (msg_id / msg_seq), groups and refused sends — against the loopback fake platform.
 */
import { afterEach, describe, expect, it } from "vitest";
import { channelSettingNotes } from "../../src/channels/channel-types.js";
import { parseQQConfig } from "../../src/channels/qq/config.js";
import { QQ_GROUP } from "./helpers/fake-qq.js";
import { nextInbound, waitFor } from "./helpers/harness.js";
import { startQQ } from "./kit/qq-platform.js";
import type { QQSession } from "./kit/qq-platform.js";

let session: QQSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

const alice = "ALICEOPENIDAAAAAAAAAAAAAAAAAAAA1";

describe("qq: connection", () => {
  it("gets an access token, identifies with it and the group-and-C2C intent, and reports connected", async () => {
    session = await startQQ({ allowFrom: [alice] });
    const identify = session.fake.gatewayOps.find((p) => p.op === 2)!;
    expect(identify.d).toMatchObject({ token: expect.stringMatching(/^QQBot token-/), intents: 1 << 25, shard: [0, 1] });
    expect(session.fake.tokenRequests).toBe(1);
    expect(session.manager.get("qq")?.status?.()).toEqual({ connected: true });
  });

  it("refuses to start when the platform rejects appId/secret, naming both keys", async () => {
    await expect(startQQ({ secret: "wrong" })).rejects.toThrow(/access token refused \(HTTP 401.*check channels\.qq\.appId and channels\.qq\.secret/);
  });

  it("after a drop, RESUMEs the session and gets the message sent while it was away", async () => {
    session = await startQQ({ allowFrom: [alice] });
    const { fake } = session;
    fake.dropGateway();
    const missed = fake.userSays({ author: alice, content: "sent during the outage", where: "c2c" });
    expect(await nextInbound(session.bus, "the replayed message", 10_000)).toMatchObject({ content: "sent during the outage", metadata: { messageId: missed } });
    expect(fake.gatewayOps.find((p) => p.op === 6)?.d).toMatchObject({ session_id: "fake-qq-session" });
    expect(fake.gatewayOps.filter((p) => p.op === 2)).toHaveLength(1);
  });
});

describe("qq: config keys", () => {
  it("requires appId and secret, naming the key", () => {
    expect(() => parseQQConfig({ secret: "s" })).toThrow(/^channels\.qq\.appId: expected the bot's AppID/);
    expect(() => parseQQConfig({ appId: 123 })).toThrow(/^channels\.qq\.secret: expected the bot's AppSecret/);
    expect(() => parseQQConfig({ appId: "1", secret: "s", msgFormat: "html" })).toThrow(/channels\.qq\.msgFormat: expected one of/);
    expect(parseQQConfig({ appId: 123, secret: "s" })).toMatchObject({ appId: "123", ackMessage: "⏳ Processing...", msgFormat: "plain", apiBase: "https://api.sgroup.qq.com" });
  });

  it("warns that downloadChunkSize is not used", () => {
    expect(channelSettingNotes({ qq: { enabled: true, downloadChunkSize: 1024 } })).toEqual([expect.stringMatching(/^channels\.qq\.downloadChunkSize is not used/)]);
  });

  it("acknowledges an accepted message with ackMessage, then answers it with the next msg_seq", async () => {
    session = await startQQ({ allowFrom: [alice], ackMessage: "working on it" });
    const messageId = session.fake.userSays({ author: alice, content: "hi", where: "c2c" });
    const inbound = await nextInbound(session.bus);
    await waitFor(() => session!.fake.sent.length === 1, "the acknowledgement");
    await session.bus.publishOutbound({ kind: "message", channel: "qq", chatId: inbound.chatId, id: "a-1", content: "hello", replyTo: messageId });
    expect(session.fake.sent.map((m) => [m.content, m.msgId, m.msgSeq])).toEqual([
      ["working on it", messageId, 1],
      ["hello", messageId, 2],
    ]);
  });

  it("msgFormat markdown sends msg_type 2 with the markdown content", async () => {
    session = await startQQ({ allowFrom: [alice], msgFormat: "markdown" });
    await session.bus.publishOutbound({ kind: "message", channel: "qq", chatId: alice, id: "md-1", content: "**bold**" });
    expect(session.fake.sent.map((m) => [m.msgType, m.content])).toEqual([[2, "**bold**"]]);
  });
});

describe("qq: groups and passive replies", () => {
  it("answers a group @-message in the group; groupPolicy mention ignores messages without @", async () => {
    session = await startQQ({ allowFrom: [alice] });
    session.fake.userSays({ author: alice, content: "chatter", where: "all" });
    const messageId = session.fake.userSays({ author: alice, content: "bot, status?", where: "at" });
    const inbound = await nextInbound(session.bus);
    expect(inbound).toMatchObject({ chatId: QQ_GROUP, content: "bot, status?", metadata: { isDirect: false, chatType: "group" } });
    expect(session.bus.inboundSize()).toBe(0);
    await session.bus.publishOutbound({ kind: "message", channel: "qq", chatId: QQ_GROUP, id: "g-1", content: "all good" });
    expect(session.fake.sent.map((m) => [m.kind, m.chatId, m.content, m.msgId])).toEqual([["group", QQ_GROUP, "all good", messageId]]);
  });

  it("a reply naming no message answers the chat's last message while QQ accepts passive replies, then sends actively", async () => {
    session = await startQQ({ allowFrom: [alice] });
    const messageId = session.fake.userSays({ author: alice, content: "remind me", where: "c2c" });
    await nextInbound(session.bus);
    await session.bus.publishOutbound({ kind: "message", channel: "qq", chatId: alice, id: "p-1", content: "soon" });
    session.clock.advance(6 * 60 * 1000);
    await session.bus.publishOutbound({ kind: "message", channel: "qq", chatId: alice, id: "p-2", content: "now" });
    expect(session.fake.sent.map((m) => [m.content, m.msgId])).toEqual([
      ["soon", messageId],
      ["now", undefined],
    ]);
  });

  it("does not retry a send the platform refused as forbidden (403)", async () => {
    session = await startQQ({ allowFrom: [alice] }, { switches: { sendMaxRetries: 3 } });
    session.fake.failNext("POST /v2/users/:id/messages", 403, 1);
    await session.bus.publishOutbound({ kind: "message", channel: "qq", chatId: alice, id: "f-1", content: "nope" });
    expect(session.fake.sent).toEqual([]);
    expect(session.waits).toEqual([]);
    expect(session.busErrors).toHaveLength(1);
  });
});
