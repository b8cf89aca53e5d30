/** Discord specifics beyond the channel kit: the gateway handshake, keys of `channels.discord`, reactions, typing, rate limits. */
import { afterEach, describe, expect, it } from "vitest";
import type { ChannelConnection } from "../../src/channels/types.js";
import { DISCORD_BOT, DISCORD_TOKEN } from "./helpers/fake-discord.js";
import { nextInbound, waitFor } from "./helpers/harness.js";
import { startDiscord } from "./kit/discord-platform.js";
import type { DiscordSession } from "./kit/discord-platform.js";

let session: DiscordSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

const alice = { id: "2000000000000000001", username: "alice" };

describe("discord: gateway", () => {
  it("identifies with the token and the Python nanobot's default intents (37377)", async () => {
    session = await startDiscord({ allowFrom: [alice.id] });
    const identify = session.fake.gatewayOps.find((p) => p.op === 2)!;
    expect(identify.d).toMatchObject({ token: DISCORD_TOKEN, intents: 37377 });
    expect(session.manager.get("discord")?.status?.()).toEqual({ connected: true });
  });

  it("sends the configured intents", async () => {
    session = await startDiscord({ intents: 33281 });
    expect(session.fake.gatewayOps.find((p) => p.op === 2)!.d).toMatchObject({ intents: 33281 });
  });

  it("answers HELLO's heartbeat interval with heartbeats", async () => {
    session = await startDiscord({}, { fake: { heartbeatIntervalMs: 50 } });
    await waitFor(() => session!.fake.gatewayOps.filter((p) => p.op === 1).length >= 2, "two heartbeats");
    expect(session.manager.get("discord")?.status?.().connected).toBe(true);
  });

  it("after a drop, RESUMEs the session and gets the message sent while it was away", async () => {
    session = await startDiscord({ allowFrom: [alice.id] });
    const fake = session.fake;
    fake.dropGateway();
    const missed = fake.dispatchMessage({ author: alice, content: "sent during the outage" });
    const inbound = await nextInbound(session.bus, "the replayed message", 10_000);
    expect(inbound).toMatchObject({ content: "sent during the outage", metadata: { messageId: missed } });
    const resume = fake.gatewayOps.find((p) => p.op === 6);
    expect(resume?.d).toMatchObject({ token: DISCORD_TOKEN, session_id: "fake-session-1" });
    expect(fake.gatewayOps.filter((p) => p.op === 2)).toHaveLength(1);
  });

  it("backs off between failed reconnects (at once, then 1 s, 2 s, 4 s) and resumes when the gateway is back", async () => {
    session = await startDiscord({ allowFrom: [alice.id] });
    const { fake, clock } = session;
    const status = (): ChannelConnection => session!.manager.get("discord")!.status!();
    const first = fake.gatewayAttempts();
    fake.refuseGateway(true);
    fake.dropGateway();
    await waitFor(() => fake.gatewayAttempts() === first + 1, "the immediate reconnect attempt");
    expect(status()).toMatchObject({ connected: false, lastError: expect.any(String) });
    // Later attempts wait on the channel clock: nothing happens until it moves.
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(fake.gatewayAttempts()).toBe(first + 1);
    clock.advance(999);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.gatewayAttempts()).toBe(first + 1);
    clock.advance(1);
    await waitFor(() => fake.gatewayAttempts() === first + 2, "the attempt after 1 s");
    await new Promise((resolve) => setTimeout(resolve, 700));
    clock.advance(1999);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(fake.gatewayAttempts()).toBe(first + 2);
    clock.advance(1);
    await waitFor(() => fake.gatewayAttempts() === first + 3, "the attempt after 2 s");
    fake.refuseGateway(false);
    await new Promise((resolve) => setTimeout(resolve, 700));
    clock.advance(4000);
    await waitFor(() => status().connected, "the resumed connection", 10_000);
    expect(fake.gatewayOps.filter((p) => p.op === 6).length).toBeGreaterThanOrEqual(1);
    fake.dispatchMessage({ author: alice, content: "back" });
    expect((await nextInbound(session.bus)).content).toBe("back");
  }, 30_000);

  it("a stopped channel makes no further connection attempts while the gateway is away", async () => {
    session = await startDiscord();
    const { fake, clock } = session;
    fake.refuseGateway(true);
    fake.dropGateway();
    await waitFor(() => fake.gatewayAttempts() === 2, "the immediate reconnect attempt");
    await session.manager.stopAll();
    clock.advance(120_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(fake.gatewayAttempts()).toBe(2);
  }, 30_000);

  it("a channel stopped while a reconnect is still being answered throws nothing when the answer comes", async () => {
    session = await startDiscord();
    const { fake } = session;
    fake.refuseGateway(true);
    const release = fake.holdGateway();
    fake.dropGateway();
    await waitFor(() => fake.gatewayAttempts() === 2, "the immediate reconnect attempt");
    await session.manager.stopAll();
    // The refusal reaches a socket whose shard is gone: unhandled, it would be an uncaught
    // exception (vitest fails the run on one).
    release();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(fake.gatewayAttempts()).toBe(2);
  }, 30_000);

  it("fails to start with a wrong token, naming the problem", async () => {
    await expect(startDiscord({ token: "wrong" })).rejects.toThrow(/discord did not start: .*(token|401|Unauthorized)/i);
  });
});

describe("discord: config", () => {
  it("refuses a channel without a token, naming the key", async () => {
    await expect(startDiscord({ token: undefined })).rejects.toThrow("channels.discord.token: expected the bot token");
  });

  it("a thread is its own session beside its parent channel, and allowChannels admits it through its parent", async () => {
    session = await startDiscord({ allowFrom: [alice.id], groupPolicy: "open", allowChannels: ["5000000000000000001"] });
    session.fake.createThread("5100000000000000001", "5000000000000000001");
    session.fake.dispatchMessage({ author: alice, content: "in the thread", guild: true, channelId: "5100000000000000001" });
    const inbound = await nextInbound(session.bus);
    expect(inbound).toMatchObject({
      chatId: "5100000000000000001",
      sessionKey: "discord:5000000000000000001:thread:5100000000000000001",
      metadata: { parentChannelId: "5000000000000000001", threadId: "5100000000000000001" },
    });
  });

  it("allowChannels limits the server channels the bot listens in", async () => {
    session = await startDiscord({ allowFrom: [alice.id], groupPolicy: "open", allowChannels: ["5000000000000000002"] });
    session.fake.dispatchMessage({ author: alice, content: "in general", guild: true });
    session.fake.dispatchMessage({ author: alice, content: "in random", guild: true, channelId: "5000000000000000002" });
    expect(await nextInbound(session.bus)).toMatchObject({ chatId: "5000000000000000002", content: "in random" });
    expect(session.bus.inboundSize()).toBe(0);
  });

  it("drops a server message from an unknown sender even when it mentions the bot (no pairing code in public)", async () => {
    session = await startDiscord();
    const mallory = { id: "3000000000000000001", username: "mallory" };
    session.fake.dispatchMessage({ author: mallory, content: `<@${DISCORD_BOT.id}> hi`, guild: true, mentions: [DISCORD_BOT] });
    session.fake.dispatchMessage({ author: mallory, content: "marker" });
    await waitFor(() => session!.fake.messages.length === 1, "the pairing code in the DM");
    expect(session.fake.messages[0]!.channelId).toBe(session.fake.dmChannel(mallory));
    expect(session.bus.inboundSize()).toBe(0);
  });
});

describe("discord: acknowledgements", () => {
  it("reacts with readReceiptEmoji, adds workingEmoji after workingEmojiDelay, removes both when the reply is sent", async () => {
    session = await startDiscord({ allowFrom: [alice.id], workingEmojiDelay: 3 });
    const id = session.fake.dispatchMessage({ author: alice, content: "hi" });
    const inbound = await nextInbound(session.bus);
    await waitFor(() => session!.fake.reactions.length === 1, "the read receipt");
    expect(session.fake.reactions[0]).toEqual({ action: "add", channelId: inbound.chatId, messageId: id, emoji: "👀" });
    session.clock.advance(2_999);
    expect(session.fake.reactions).toHaveLength(1);
    session.clock.advance(1);
    await waitFor(() => session!.fake.reactions.length === 2, "the working emoji");
    await session.bus.publishOutbound({ kind: "message", channel: "discord", chatId: inbound.chatId, id: "a-1", content: "hello" });
    expect(session.fake.reactions.slice(2).map((r) => [r.action, r.emoji])).toEqual([
      ["remove", "👀"],
      ["remove", "🔧"],
    ]);
  });

  it("empty emojis switch the reactions off", async () => {
    session = await startDiscord({ allowFrom: [alice.id], readReceiptEmoji: "", workingEmoji: "" });
    session.fake.dispatchMessage({ author: alice, content: "hi" });
    const inbound = await nextInbound(session.bus);
    session.clock.advance(10_000);
    await session.bus.publishOutbound({ kind: "message", channel: "discord", chatId: inbound.chatId, id: "a-2", content: "hello" });
    expect(session.fake.reactions).toEqual([]);
  });

  it("shows typing while the agent works and stops when the reply is sent", async () => {
    session = await startDiscord({ allowFrom: [alice.id] });
    session.fake.dispatchMessage({ author: alice, content: "hi" });
    const inbound = await nextInbound(session.bus);
    await waitFor(() => session!.fake.typing.length === 1, "the typing indicator");
    session.clock.advance(8_000);
    await waitFor(() => session!.fake.typing.length === 2, "the refreshed typing indicator");
    await session.bus.publishOutbound({ kind: "message", channel: "discord", chatId: inbound.chatId, id: "a-3", content: "done" });
    session.clock.advance(30_000);
    expect(session.fake.typing).toHaveLength(2);
  });
});

describe("discord: sends", () => {
  it("waits Discord's retry_after on a 429, then sends once", async () => {
    session = await startDiscord();
    session.fake.failNext("POST /channels/:id/messages", 429);
    await session.bus.publishOutbound({ kind: "message", channel: "discord", chatId: "5000000000000000001", id: "r-1", content: "hello" });
    // discord.js adds its 50 ms clock-skew offset to Discord's 7 s.
    expect(session.waits).toHaveLength(1);
    expect(session.waits[0]).toBeGreaterThanOrEqual(7000);
    expect(session.waits[0]).toBeLessThanOrEqual(7100);
    expect(session.fake.messages.map((m) => m.content)).toEqual(["hello"]);
  });

  it("does not retry a 403 (missing permissions)", async () => {
    session = await startDiscord();
    session.fake.failNext("POST /channels/:id/messages", 403);
    await session.bus.publishOutbound({ kind: "message", channel: "discord", chatId: "5000000000000000001", id: "r-2", content: "hello" });
    expect(session.waits).toEqual([]);
    expect(session.busErrors).toHaveLength(1);
  });

  it("never lets the model ping @everyone, and a reply does not ping the asker", async () => {
    session = await startDiscord();
    await session.bus.publishOutbound({ kind: "message", channel: "discord", chatId: "5000000000000000001", id: "r-3", content: "@everyone hi", replyTo: "123" });
    const post = session.fake.requests.find((r) => r.method === "POST" && r.path.endsWith("/messages"))!;
    expect(post.body).toMatchObject({ allowed_mentions: { parse: ["users"], replied_user: false }, message_reference: { message_id: "123" } });
  });

  it("a file that cannot be read becomes a note instead of a failed reply", async () => {
    session = await startDiscord();
    await session.bus.publishOutbound({
      kind: "message",
      channel: "discord",
      chatId: "5000000000000000001",
      id: "r-4",
      content: "see attached",
      media: [{ kind: "document", path: "/nonexistent/report.pdf", name: "report.pdf" }],
    });
    expect(session.fake.messages.map((m) => m.content)).toEqual(["see attached", "[attachment: report.pdf - send failed]"]);
    expect(session.busErrors).toEqual([]);
  });

  it("strips the bot mention so a server command reads /new", async () => {
    session = await startDiscord({ allowFrom: [alice.id] });
    session.fake.dispatchMessage({ author: alice, content: `<@${DISCORD_BOT.id}> /new`, guild: true, mentions: [DISCORD_BOT] });
    expect((await nextInbound(session.bus)).content).toBe("/new");
  });
});
