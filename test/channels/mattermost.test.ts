/**
 * Mattermost specifics beyond the channel kit: the WebSocket handshake and keep-alive, the keys
 * of `channels.mattermost` (refusals, warnings, policies, dm, teamId, threads, receipts),
 * thread context and rate limits — all against the loopback fake server.
 */
import { afterEach, describe, expect, it } from "vitest";
import { channelSettingNotes } from "../../src/channels/channel-types.js";
import type { ChannelConnection } from "../../src/channels/types.js";
import { parseMattermostConfig } from "../../src/channels/mattermost/config.js";
import { MATTERMOST_BOT, MATTERMOST_GROUP_CHANNEL, MATTERMOST_TEAM, MATTERMOST_TOKEN } from "./helpers/fake-mattermost.js";
import { nextInbound, waitFor } from "./helpers/harness.js";
import { startMattermost } from "./kit/mattermost-platform.js";
import type { MattermostSession } from "./kit/mattermost-platform.js";

let session: MattermostSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

const alice = { id: "aliceaaaaaaaaaaaaaaaaaaaaa", username: "alice" };
const bob = { id: "bobaaaaaaaaaaaaaaaaaaaaaaa", username: "bob" };
const mention = `@${MATTERMOST_BOT.username}`;

async function quiet(s: MattermostSession): Promise<void> {
  // A post the bot ignores leaves no trace; a later allowed post proves the earlier one was seen.
  s.fake.userPosts({ author: alice, message: "sentinel" });
  expect((await nextInbound(s.bus, "the sentinel")).content).toBe("sentinel");
}

describe("mattermost: connection", () => {
  it("authenticates REST with the bearer token and the socket with an authentication_challenge, then reports connected", async () => {
    session = await startMattermost({ allowFrom: [alice.id] });
    expect(session.fake.requests[0]).toMatchObject({ method: "GET", path: "/users/me" });
    const challenge = await waitFor(() => session!.fake.actions.find((a) => a.action === "authentication_challenge"), "the authentication challenge");
    expect(challenge.data).toEqual({ token: MATTERMOST_TOKEN });
    expect(session.manager.get("mattermost")?.status?.()).toEqual({ connected: true });
  });

  it("refuses to start with a token the server rejects, naming channels.mattermost.token", async () => {
    await expect(startMattermost({ token: "wrong" })).rejects.toThrow(/users\/me failed: .*check channels\.mattermost\.token/);
  });

  it("pings the server and reconnects when a ping goes unanswered", async () => {
    session = await startMattermost({ allowFrom: [alice.id] });
    const { fake, clock } = session;
    fake.silence(true);
    clock.advance(30_000);
    await waitFor(() => fake.actions.some((a) => a.action === "ping"), "a ping");
    fake.silence(false);
    clock.advance(30_000);
    await waitFor(() => fake.connections() === 2, "the reconnection after the unanswered ping");
    fake.userPosts({ author: alice, message: "still there?" });
    expect((await nextInbound(session.bus)).content).toBe("still there?");
  });

  it("backs off between failed reconnects (at once, then 1 s, 2 s) on the channel clock and recovers", async () => {
    session = await startMattermost({ allowFrom: [alice.id] });
    const { fake, clock } = session;
    const status = (): ChannelConnection => session!.manager.get("mattermost")!.status!();
    const first = fake.socketAttempts();
    fake.refuseSockets(true);
    fake.dropSockets();
    await waitFor(() => fake.socketAttempts() === first + 1, "the immediate reconnect attempt");
    await waitFor(() => status().lastError?.includes("HTTP 503"), "the refusal in the status");
    expect(status().connected).toBe(false);
    clock.advance(999);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.socketAttempts()).toBe(first + 1);
    clock.advance(1);
    await waitFor(() => fake.socketAttempts() === first + 2, "the attempt after 1 s");
    fake.refuseSockets(false);
    clock.advance(2000);
    await waitFor(() => status().connected, "the reconnection after 2 s");
    expect(fake.socketAttempts()).toBe(first + 3);
    fake.userPosts({ author: alice, message: "back" });
    expect((await nextInbound(session.bus)).content).toBe("back");
  });
});

describe("mattermost: config keys", () => {
  it("requires serverUrl (or url) and token, naming the key", () => {
    expect(() => parseMattermostConfig({ token: "t" })).toThrow(/channels\.mattermost\.serverUrl: expected the Mattermost server URL/);
    expect(() => parseMattermostConfig({ serverUrl: "chat.example.com", token: "t" })).toThrow(/channels\.mattermost\.serverUrl: expected an http/);
    expect(() => parseMattermostConfig({ serverUrl: "https://chat.example.com" })).toThrow(/channels\.mattermost\.token: expected/);
    expect(() => parseMattermostConfig({ serverUrl: "https://x", token: "t", groupPolicy: "sometimes" })).toThrow(/channels\.mattermost\.groupPolicy: expected one of/);
    const config = parseMattermostConfig({ url: "https://chat.example.com/", token: "t", groupPolicy: "open" });
    expect(config).toMatchObject({ serverUrl: "https://chat.example.com", groupPolicyInThread: "open", replyInThread: true, reactEmoji: "eyes", doneEmoji: "white_check_mark" });
  });

  it("warns that allowFromMatchMode email is not supported", () => {
    const notes = channelSettingNotes({ mattermost: { enabled: true, allowFromMatchMode: "email" } });
    expect(notes).toEqual([expect.stringMatching(/^channels\.mattermost\.allowFromMatchMode "email" is not supported/)]);
    expect(channelSettingNotes({ mattermost: { enabled: true, allowFromMatchMode: "username" } })).toEqual([]);
  });

  it("allowFromMatchMode username compares allowFrom with usernames", async () => {
    session = await startMattermost({ allowFrom: ["alice"], allowFromMatchMode: "username" });
    session.fake.userPosts({ author: bob, message: "me too" });
    session.fake.userPosts({ author: alice, message: "by name" });
    expect(await nextInbound(session.bus)).toMatchObject({ senderId: alice.id, content: "by name", metadata: { username: "alice" } });
    expect(session.bus.inboundSize()).toBe(0);
  });

  it("dm.enabled false ignores direct messages; channel mentions still work", async () => {
    session = await startMattermost({ allowFrom: [alice.id], dm: { enabled: false } });
    session.fake.userPosts({ author: alice, message: "psst" });
    session.fake.userPosts({ author: alice, message: `${mention} hi`, channelId: MATTERMOST_GROUP_CHANNEL, mentionsBot: true });
    expect((await nextInbound(session.bus)).content).toBe("hi");
    expect(session.bus.inboundSize()).toBe(0);
  });

  it("dm.policy open answers any direct message without a pairing code; dm.allowFrom admits listed users", async () => {
    session = await startMattermost({ dm: { policy: "open" } });
    session.fake.userPosts({ author: bob, message: "hello stranger" });
    expect(await nextInbound(session.bus)).toMatchObject({ senderId: bob.id, content: "hello stranger" });
    await session.close();
    session = await startMattermost({ dm: { policy: "allowlist", allowFrom: [bob.id] } });
    session.fake.userPosts({ author: bob, message: "listed" });
    expect(await nextInbound(session.bus)).toMatchObject({ senderId: bob.id, content: "listed" });
  });

  it("groupPolicy allowlist answers every post in groupAllowFrom channels only", async () => {
    session = await startMattermost({ allowFrom: [alice.id], groupPolicy: "allowlist", groupAllowFrom: [MATTERMOST_GROUP_CHANNEL] });
    session.fake.userPosts({ author: alice, message: "no mention needed", channelId: MATTERMOST_GROUP_CHANNEL });
    expect(await nextInbound(session.bus)).toMatchObject({ chatId: MATTERMOST_GROUP_CHANNEL, content: "no mention needed" });
  });

  it("groupPolicyInThread open answers thread replies without a mention, while top-level posts still need one", async () => {
    session = await startMattermost({ allowFrom: [alice.id], groupPolicy: "mention", groupPolicyInThread: "open", includeThreadContext: false });
    const root = session.fake.userPosts({ author: alice, message: "top level, no mention", channelId: MATTERMOST_GROUP_CHANNEL });
    session.fake.userPosts({ author: alice, message: "in the thread", channelId: MATTERMOST_GROUP_CHANNEL, rootId: root });
    expect(await nextInbound(session.bus)).toMatchObject({ content: "in the thread", metadata: { rootId: root } });
    expect(session.bus.inboundSize()).toBe(0);
  });

  it("teamId ignores channel posts of another team", async () => {
    session = await startMattermost({ allowFrom: [alice.id], groupPolicy: "open", teamId: MATTERMOST_TEAM });
    session.fake.userPosts({ author: alice, message: "other team", channelId: MATTERMOST_GROUP_CHANNEL, teamId: "otherteamaaaaaaaaaaaaaaaaa" });
    session.fake.userPosts({ author: alice, message: "our team", channelId: MATTERMOST_GROUP_CHANNEL });
    expect((await nextInbound(session.bus)).content).toBe("our team");
    await quiet(session);
  });
});

describe("mattermost: threads and receipts", () => {
  it("answers a channel mention in a thread under the post (replyInThread), in the thread's own session", async () => {
    session = await startMattermost({ allowFrom: [alice.id] });
    const postId = session.fake.userPosts({ author: alice, message: `${mention} deploy?`, channelId: MATTERMOST_GROUP_CHANNEL, mentionsBot: true });
    const inbound = await nextInbound(session.bus);
    expect(inbound).toMatchObject({ content: "deploy?", sessionKey: `mattermost:${MATTERMOST_GROUP_CHANNEL}:${postId}`, metadata: { messageId: postId, isDirect: false } });
    await session.bus.publishOutbound({ kind: "message", channel: "mattermost", chatId: inbound.chatId, id: "t-1", content: "deploying", replyTo: postId });
    expect(session.fake.botPosts().map((p) => [p.message, p.rootId])).toEqual([["deploying", postId]]);
    // The thread is now one the bot takes part in: a reply there needs no mention.
    session.fake.userPosts({ author: alice, message: "and staging?", channelId: MATTERMOST_GROUP_CHANNEL, rootId: postId });
    expect(await nextInbound(session.bus)).toMatchObject({ content: "and staging?", sessionKey: `mattermost:${MATTERMOST_GROUP_CHANNEL}:${postId}` });
  });

  it("replyInThread false answers in the channel itself; a streamed reply follows the same rule", async () => {
    session = await startMattermost({ allowFrom: [alice.id], replyInThread: false });
    const postId = session.fake.userPosts({ author: alice, message: `${mention} hi`, channelId: MATTERMOST_GROUP_CHANNEL, mentionsBot: true });
    const inbound = await nextInbound(session.bus);
    expect(inbound.sessionKey).toBeUndefined();
    await session.bus.publishOutbound({ kind: "message", channel: "mattermost", chatId: inbound.chatId, id: "t-2", content: "hello", replyTo: postId });
    expect(session.fake.botPosts().map((p) => [p.message, p.rootId])).toEqual([["hello", ""]]);
  });

  it("streams a threaded reply inside the thread and shows typing there", async () => {
    session = await startMattermost({ allowFrom: [alice.id] });
    const postId = session.fake.userPosts({ author: alice, message: `${mention} stream it`, channelId: MATTERMOST_GROUP_CHANNEL, mentionsBot: true });
    await nextInbound(session.bus);
    await waitFor(() => session!.fake.actions.find((a) => a.action === "user_typing"), "typing");
    expect(session.fake.actions.find((a) => a.action === "user_typing")?.data).toEqual({ channel_id: MATTERMOST_GROUP_CHANNEL, parent_id: postId });
    const to = { channel: "mattermost", chatId: MATTERMOST_GROUP_CHANNEL };
    await session.bus.publishOutbound({ ...to, kind: "delta", streamId: "s1", delta: "part" });
    await session.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "s1", id: "s1-final", content: "part and whole" });
    expect(session.fake.botPosts().map((p) => [p.message, p.rootId])).toEqual([["part and whole", postId]]);
  });

  it("streams two threads of one channel at once, each preview in and edited to its final text in its own thread", async () => {
    session = await startMattermost({ allowFrom: [alice.id, bob.id], reactEmoji: "hourglass", doneEmoji: "ok" });
    const postA = session.fake.userPosts({ author: alice, message: `${mention} first`, channelId: MATTERMOST_GROUP_CHANNEL, mentionsBot: true });
    await nextInbound(session.bus);
    const postB = session.fake.userPosts({ author: bob, message: `${mention} second`, channelId: MATTERMOST_GROUP_CHANNEL, mentionsBot: true });
    await nextInbound(session.bus);
    await waitFor(() => session!.fake.reactions.length === 2, "both receipts");
    const to = { channel: "mattermost", chatId: MATTERMOST_GROUP_CHANNEL };
    const delta = (streamId: string, replyTo: string, text: string) => session!.bus.publishOutbound({ ...to, kind: "delta", streamId, delta: text, replyTo });
    await delta("sa", postA, "Answer ");
    await delta("sb", postB, "Reply ");
    await waitFor(() => session!.fake.botPosts().length === 2, "both previews");
    await delta("sa", postA, "for alice");
    await delta("sb", postB, "for bob");
    await session.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "sb", id: "sb-final", content: "Reply for bob", replyTo: postB });
    await session.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "sa", id: "sa-final", content: "Answer for alice", replyTo: postA });
    expect(session.fake.botPosts().map((p) => [p.message, p.rootId])).toEqual([
      ["Answer for alice", postA],
      ["Reply for bob", postB],
    ]);
    // Each asking post had its receipt swapped for the done one.
    const done = session.fake.reactions.filter((r) => r.action === "add" && r.emoji === "ok").map((r) => r.postId);
    expect(done.sort()).toEqual([postA, postB].sort());
  });

  it("puts reactEmoji on an accepted post, and swaps it for doneEmoji once the reply is sent", async () => {
    session = await startMattermost({ allowFrom: [alice.id], reactEmoji: "hourglass", doneEmoji: "ok" });
    const postId = session.fake.userPosts({ author: alice, message: "work" });
    const inbound = await nextInbound(session.bus);
    await waitFor(() => session!.fake.reactions.length === 1, "the read receipt");
    await session.bus.publishOutbound({ kind: "message", channel: "mattermost", chatId: inbound.chatId, id: "r-1", content: "done" });
    expect(session.fake.reactions).toEqual([
      { action: "add", postId, emoji: "hourglass" },
      { action: "remove", postId, emoji: "hourglass" },
      { action: "add", postId, emoji: "ok" },
    ]);
  });

  it("hands the model the thread so far on the first mention inside a thread (includeThreadContext)", async () => {
    session = await startMattermost({ allowFrom: [alice.id, bob.id], threadContextLimit: 5 });
    const root = session.fake.userPosts({ author: bob, message: "the build is red", channelId: MATTERMOST_GROUP_CHANNEL });
    session.fake.userPosts({ author: bob, message: "since this morning", channelId: MATTERMOST_GROUP_CHANNEL, rootId: root });
    session.fake.userPosts({ author: alice, message: `${mention} why?`, channelId: MATTERMOST_GROUP_CHANNEL, rootId: root, mentionsBot: true });
    const inbound = await nextInbound(session.bus);
    expect(inbound.content).toContain("the build is red");
    expect(inbound.content).toContain("since this morning");
    expect(inbound.content.endsWith("why?")).toBe(true);
  });
});

describe("mattermost: rate limits", () => {
  it("retries a send the server refused with 429", async () => {
    session = await startMattermost({ allowFrom: [alice.id] }, { switches: { sendMaxRetries: 3 } });
    session.fake.failNext("POST /posts", 429, 1);
    await session.bus.publishOutbound({ kind: "message", channel: "mattermost", chatId: session.fake.dmChannel(alice), id: "rl-1", content: "later" });
    expect(session.fake.botPosts().map((p) => p.message)).toEqual(["later"]);
    expect(session.waits).toEqual([1000]);
  });

  it("does not retry a send the server refused as forbidden (403)", async () => {
    session = await startMattermost({ allowFrom: [alice.id] }, { switches: { sendMaxRetries: 3 } });
    session.fake.failNext("POST /posts", 403, 1);
    await session.bus.publishOutbound({ kind: "message", channel: "mattermost", chatId: session.fake.dmChannel(alice), id: "rl-2", content: "nope" });
    expect(session.fake.botPosts()).toEqual([]);
    expect(session.waits).toEqual([]);
    expect(session.busErrors).toHaveLength(1);
  });
});
