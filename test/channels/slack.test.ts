/**
 * Slack specifics beyond the channel kit: the Socket Mode handshake and acknowledgements, the
 * Events API over HTTP (signature, replay window, url_verification, retries deduplicated by
 * event id), config keys with their refusals and warnings, threads, reactions, mrkdwn, rate
 * limits, thread context, and the direct-message and channel policies.
 */
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { channelSettingNotes, unknownChannelTypes } from "../../src/channels/channel-types.js";
import { parseSlackConfig } from "../../src/channels/slack/config.js";
import { slackSignature } from "../../src/channels/slack/events-api.js";
import { toMrkdwn } from "../../src/channels/slack/mrkdwn.js";
import { SLACK_APP_TOKEN, SLACK_BOT, SLACK_BOT_TOKEN, SLACK_GROUP_CHANNEL } from "./helpers/fake-slack.js";
import { nextInbound, waitFor } from "./helpers/harness.js";
import { startSlack } from "./kit/slack-platform.js";
import type { SlackSession } from "./kit/slack-platform.js";

const alice = { id: "U0ALICE", username: "alice" };
const bob = { id: "U0BOB", username: "bob" };

let session: SlackSession | undefined;
let server: Server | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
  if (server) await new Promise<void>((resolve) => server!.close(() => resolve()));
  server = undefined;
});

async function start(config: Record<string, unknown> = {}, options: { switches?: Record<string, unknown>; httpServer?: Server } = {}): Promise<SlackSession> {
  session = await startSlack(config, options);
  return session;
}

function reply(s: SlackSession, chatId: string, id: string, content: string, replyTo?: string): Promise<void> {
  return s.bus.publishOutbound({ kind: "message", channel: "slack", chatId, id, content, ...(replyTo ? { replyTo } : {}) });
}

describe("slack config", () => {
  it("refuses a config without the tokens it needs, naming the key", () => {
    expect(() => parseSlackConfig({ enabled: true, appToken: "xapp-1" })).toThrow(/channels\.slack\.botToken: expected the bot token/);
    expect(() => parseSlackConfig({ enabled: true, botToken: "xoxb-1" })).toThrow(/channels\.slack\.appToken: expected the app-level token/);
    expect(() => parseSlackConfig({ enabled: true, botToken: "xoxb-1", mode: "http" })).toThrow(/channels\.slack\.signingSecret: expected the signing secret/);
    expect(() => parseSlackConfig({ enabled: true, botToken: "xoxb-1", mode: "events" })).toThrow(/channels\.slack\.mode: expected one of "socket", "http"/);
    expect(() => parseSlackConfig({ enabled: true, botToken: "xoxb-1", appToken: "xapp-1", groupPolicy: "all" })).toThrow(/channels\.slack\.groupPolicy/);
  });

  it("reads the Python keys with the Python defaults", () => {
    const config = parseSlackConfig({ enabled: true, botToken: "xoxb-1", appToken: "xapp-1" });
    expect(config).toMatchObject({
      mode: "socket",
      webhookPath: "/slack/events",
      replyInThread: true,
      reactEmoji: "eyes",
      doneEmoji: "white_check_mark",
      includeThreadContext: true,
      threadContextLimit: 20,
      groupPolicy: "mention",
      groupAllowFrom: [],
      groupRequireMention: false,
      dm: { enabled: true, policy: "open", allowFrom: [] },
    });
  });

  it("is a known channel type now, and warns about keys it does not honour", () => {
    expect(unknownChannelTypes({ slack: { enabled: true } })).toEqual([]);
    const notes = channelSettingNotes({ slack: { enabled: true, userTokenReadOnly: true, dm: { policy: "open" } } });
    expect(notes).toHaveLength(2);
    expect(notes[0]).toMatch(/channels\.slack\.userTokenReadOnly has no effect/);
    expect(notes[1]).toMatch(/channels\.slack\.dm\.policy "open" .* set channels\.slack\.allowFrom to \["\*"\]/);
    expect(channelSettingNotes({ slack: { enabled: true, allowFrom: ["*"], dm: { policy: "open" } } })).toEqual([]);
  });

  it("fails the start with the key when Slack refuses the bot token", async () => {
    await expect(start({ botToken: "xoxb-wrong" })).rejects.toThrow(/channels\.slack\.botToken: Slack refused auth\.test/);
  });

  it("fails the start with the key when Slack refuses the app token", async () => {
    await expect(start({ appToken: "xapp-wrong" })).rejects.toThrow(/channels\.slack\.appToken: Socket Mode did not connect/);
  });
});

describe("slack socket mode", () => {
  it("opens the socket with the app token, calls the Web API with the bot token, and acknowledges every envelope", async () => {
    const s = await start({ allowFrom: [alice.id] });
    expect(s.fake.callsOf("apps.connections.open").map((c) => c.token)).toEqual([SLACK_APP_TOKEN]);
    expect(s.fake.callsOf("auth.test").map((c) => c.token)).toEqual([SLACK_BOT_TOKEN]);
    await s.userSays(alice, "hi", { chat: "dm" });
    await nextInbound(s.bus);
    expect(s.fake.acks).toEqual(["env-1"]);
    expect(s.manager.list().find((c) => c.name === "slack")).toMatchObject({ connected: true });
  });

  it("reconnects when Slack asks it to (a `disconnect` message)", async () => {
    const s = await start({ allowFrom: [alice.id] });
    s.fake.askToReconnect();
    await waitFor(() => s.fake.sessions() === 2, "the second Socket Mode session", 15_000);
    await s.userSays(alice, "still there?", { chat: "dm" });
    expect((await nextInbound(s.bus, "the message after the reconnect", 15_000)).content).toBe("still there?");
    expect(s.manager.list().find((c) => c.name === "slack")).toMatchObject({ connected: true, lastError: expect.stringMatching(/reconnecting/) });
  }, 30_000);

  it("answers a mention once although Slack sends both message and app_mention", async () => {
    const s = await start({ allowFrom: [alice.id] });
    await s.userSays(alice, "ping", { chat: "group", address: "mention" });
    expect(await nextInbound(s.bus)).toMatchObject({ content: "ping" });
    expect(s.fake.acks).toHaveLength(2);
    expect(s.bus.inboundSize()).toBe(0);
  });
});

describe("slack threads, reactions and formatting", () => {
  it("answers a channel message in a thread under it, with its own session, and streams there too", async () => {
    const s = await start({ allowFrom: [alice.id] });
    const ts = await s.userSays(alice, "question", { chat: "group", address: "mention" });
    const inbound = await nextInbound(s.bus);
    expect(inbound.sessionKey).toBe(`slack:${SLACK_GROUP_CHANNEL}:${ts}`);
    await reply(s, SLACK_GROUP_CHANNEL, "t-1", "answer", String(inbound.metadata?.messageId));
    const to = { channel: "slack", chatId: SLACK_GROUP_CHANNEL };
    await s.userSays(alice, "more", { chat: "group", address: "mention" });
    const second = await nextInbound(s.bus);
    await s.bus.publishOutbound({ ...to, kind: "delta", streamId: "st", delta: "stream" });
    await waitFor(() => s.sent().length === 2, "the streamed preview");
    await s.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "st", id: "t-2", content: "streamed answer" });
    expect(s.sent().map((m) => [m.text, m.replyTo])).toEqual([
      ["answer", ts],
      ["streamed answer", second.metadata?.messageId],
    ]);
  });

  it("streams two threads of one channel at once, each preview in and edited to its final text in its own thread", async () => {
    const s = await start({ allowFrom: [alice.id, bob.id] });
    const tsA = await s.userSays(alice, "first question", { chat: "group", address: "mention" });
    const a = await nextInbound(s.bus);
    const tsB = await s.userSays(bob, "second question", { chat: "group", address: "mention" });
    const b = await nextInbound(s.bus);
    await waitFor(() => s.fake.reactions.length === 2, "both working reactions");
    const to = { channel: "slack", chatId: SLACK_GROUP_CHANNEL };
    const delta = (streamId: string, replyTo: string, text: string) => s.bus.publishOutbound({ ...to, kind: "delta", streamId, delta: text, replyTo });
    await delta("st-a", String(a.metadata?.messageId), "Answer ");
    await delta("st-b", String(b.metadata?.messageId), "Reply ");
    await waitFor(() => s.sent().length === 2, "both previews");
    await delta("st-a", String(a.metadata?.messageId), "for alice");
    await delta("st-b", String(b.metadata?.messageId), "for bob");
    await s.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "st-b", id: "t-b", content: "Reply for bob", replyTo: String(b.metadata?.messageId) });
    await s.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "st-a", id: "t-a", content: "Answer for alice", replyTo: String(a.metadata?.messageId) });
    expect(s.sent().map((m) => [m.text, m.replyTo])).toEqual([
      ["Answer for alice", tsA],
      ["Reply for bob", tsB],
    ]);
    // Each message wears its own reactions: both were answered.
    await waitFor(() => s.fake.reactions.filter((r) => r.action === "add" && r.name === "white_check_mark").length === 2, "both done reactions");
    const done = s.fake.reactions.filter((r) => r.action === "add" && r.name === "white_check_mark").map((r) => r.ts);
    expect(done.sort()).toEqual([tsA, tsB].sort());
  });

  it("does not open a thread for a top-level direct message (as the Python nanobot)", async () => {
    const s = await start({ allowFrom: [alice.id] });
    await s.userSays(alice, "hi", { chat: "dm" });
    const inbound = await nextInbound(s.bus);
    expect(inbound.sessionKey).toBeUndefined();
    await reply(s, inbound.chatId, "dm-1", "hello", String(inbound.metadata?.messageId));
    expect(s.sent().map((m) => [m.text, m.replyTo])).toEqual([["hello", undefined]]);
  });

  it("puts reactEmoji on the message it works on and swaps it for doneEmoji when answered", async () => {
    const s = await start({ allowFrom: [alice.id] });
    const ts = await s.userSays(alice, "hi", { chat: "dm" });
    const inbound = await nextInbound(s.bus);
    await waitFor(() => s.fake.reactions.length === 1, "the working reaction");
    await reply(s, inbound.chatId, "r-1", "done");
    const chat = s.dmChat(alice);
    expect(s.fake.reactions).toEqual([
      { action: "add", channel: chat, ts, name: "eyes" },
      { action: "remove", channel: chat, ts, name: "eyes" },
      { action: "add", channel: chat, ts, name: "white_check_mark" },
    ]);
  });

  it("sends Markdown as Slack mrkdwn", async () => {
    const s = await start({ allowFrom: [alice.id] });
    await reply(s, s.dmChat(alice), "md-1", "**Bold**, *italic*, ~~gone~~ and [docs](https://example.com/a_b) & `a<b`");
    expect(s.sent()[0]!.text).toBe("*Bold*, _italic_, ~gone~ and <https://example.com/a_b|docs> &amp; `a<b`");
    expect(toMrkdwn("## Heading\n- item")).toBe("*Heading*\n• item");
  });

  it("waits as long as Slack's Retry-After says on a rate limit", async () => {
    const s = await start({ allowFrom: [alice.id] }, { switches: { sendMaxRetries: 3 } });
    s.fake.failNext("chat.postMessage", 1, { retryAfterS: 3 });
    await reply(s, s.dmChat(alice), "rl-1", "after the wait");
    expect(s.waits).toEqual([3000]);
    expect(s.sent().map((m) => m.text)).toEqual(["after the wait"]);
  });

  it("does not retry an error Slack will repeat (channel_not_found)", async () => {
    const s = await start({ allowFrom: [alice.id] }, { switches: { sendMaxRetries: 3 } });
    s.fake.failNext("chat.postMessage", 1, { error: "channel_not_found" });
    await reply(s, "C0GONE", "nf-1", "lost");
    expect(s.waits).toEqual([]);
    expect(s.busErrors).toHaveLength(1);
  });

  it("hands the model the thread so far the first time it is mentioned inside a thread", async () => {
    const s = await start({ allowFrom: [alice.id, bob.id] });
    s.fake.setThread(SLACK_GROUP_CHANNEL, "1600000000.000100", [
      { ts: "1600000000.000100", user: bob.id, text: "shall we ship friday?" },
      { ts: "1600000000.000200", user: alice.id, text: "not sure" },
    ]);
    await s.fake.say({ user: alice, text: `<@${SLACK_BOT.id}> what do you think?`, channel: SLACK_GROUP_CHANNEL, threadTs: "1600000000.000100" });
    const inbound = await nextInbound(s.bus);
    expect(inbound.content).toBe(
      "Slack thread context before this mention:\n- <@U0BOB>: shall we ship friday?\n- <@U0ALICE>: not sure\n\nCurrent message:\nwhat do you think?",
    );
    expect(inbound.sessionKey).toBe(`slack:${SLACK_GROUP_CHANNEL}:1600000000.000100`);
    await s.fake.say({ user: alice, text: `<@${SLACK_BOT.id}> and now?`, channel: SLACK_GROUP_CHANNEL, threadTs: "1600000000.000100" });
    expect((await nextInbound(s.bus)).content).toBe("and now?");
    expect(s.fake.callsOf("conversations.replies")).toHaveLength(1);
  });
});

describe("slack policies", () => {
  it("ignores direct messages with dm.enabled false", async () => {
    const s = await start({ allowFrom: [alice.id], dm: { enabled: false }, groupPolicy: "open" });
    await s.userSays(alice, "dm", { chat: "dm" });
    await s.userSays(alice, "channel", { chat: "group", address: "none" });
    expect((await nextInbound(s.bus)).content).toBe("channel");
    expect(s.bus.inboundSize()).toBe(0);
  });

  it("with dm.policy allowlist admits dm.allowFrom senders in direct messages only", async () => {
    const s = await start({ allowFrom: [alice.id], dm: { policy: "allowlist", allowFrom: [bob.id] }, groupPolicy: "open" });
    await s.userSays(bob, "in the group", { chat: "group", address: "none" });
    await s.userSays(bob, "direct", { chat: "dm" });
    expect(await nextInbound(s.bus)).toMatchObject({ senderId: bob.id, content: "direct" });
    expect(s.bus.inboundSize()).toBe(0);
  });

  it("with groupPolicy allowlist answers only the listed channels, and only mentions with groupRequireMention", async () => {
    const s = await start({ allowFrom: [alice.id], groupPolicy: "allowlist", groupAllowFrom: [SLACK_GROUP_CHANNEL], groupRequireMention: true });
    await s.fake.say({ user: alice, text: `<@${SLACK_BOT.id}> elsewhere`, channel: "C0OTHER" });
    await s.userSays(alice, "no mention", { chat: "group", address: "none" });
    await s.userSays(alice, "mentioned", { chat: "group", address: "mention" });
    expect((await nextInbound(s.bus)).content).toBe("mentioned");
    expect(s.bus.inboundSize()).toBe(0);
  });

  it("downloads a shared file with the bot token into the media folder", async () => {
    const s = await start({ allowFrom: [alice.id] });
    await s.userSays(alice, "", { chat: "dm" }, { name: "notes.txt", mimeType: "text/plain", content: "NOTES" });
    const inbound = await nextInbound(s.bus);
    expect(inbound.media?.[0]).toMatchObject({ kind: "document", name: "notes.txt", mimeType: "text/plain" });
  });
});

describe("slack files that cannot be downloaded", () => {
  it("hands the model a note naming the file instead", async () => {
    const s = await start({ allowFrom: [alice.id] });
    const { event } = s.fake.messageEvent({ user: alice, text: "see attached", file: { name: "gone.pdf", mimetype: "application/pdf", content: "x" } });
    const files = event.files as Array<Record<string, unknown>>;
    files[0]!.url_private_download = `${s.fake.url}/files/F0MISSING`;
    await s.fake.deliverEvent(event);
    const inbound = await nextInbound(s.bus);
    expect(inbound.media).toBeUndefined();
    expect(inbound.content).toMatch(/^see attached\n\[file: gone\.pdf: download failed; not available to nanobot/);
  });
});

describe("slack events API over HTTP", () => {
  const SECRET = "fake-signing-secret";

  /** A stand-in for the gateway's HTTP server: its own app answers every other path. */
  async function gatewayServer(): Promise<{ server: Server; url: string }> {
    const s = createServer((_req, res) => {
      res.writeHead(418, { "content-type": "text/plain" });
      res.end("gateway app");
    });
    await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
    server = s;
    return { server: s, url: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
  }

  async function post(url: string, body: unknown, options: { timestamp?: number; secret?: string; headers?: Record<string, string> } = {}): Promise<Response> {
    const text = JSON.stringify(body);
    // The session's fake clock reads 1,000,000 ms.
    const timestamp = String(options.timestamp ?? 1000);
    return fetch(`${url}/slack/events`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-slack-request-timestamp": timestamp,
        "x-slack-signature": slackSignature(options.secret ?? SECRET, timestamp, text),
        ...options.headers,
      },
      body: text,
    });
  }

  function callback(s: SlackSession, eventId: string, text: string): Record<string, unknown> {
    const { event } = s.fake.messageEvent({ user: alice, text });
    return { token: "t", team_id: "T0FAKE", api_app_id: "A0FAKE", type: "event_callback", event_id: eventId, event_time: 1000, event };
  }

  it("answers url_verification, accepts signed events once, refuses unsigned, forged and stale ones", async () => {
    const gw = await gatewayServer();
    const s = await start({ mode: "http", signingSecret: SECRET, appToken: undefined, allowFrom: [alice.id] }, { httpServer: gw.server });
    expect(s.fake.callsOf("apps.connections.open")).toEqual([]);

    const verify = await post(gw.url, { type: "url_verification", token: "t", challenge: "c-123" });
    expect(verify.status).toBe(200);
    expect(await verify.json()).toEqual({ challenge: "c-123" });

    const event = callback(s, "Ev001", "over http");
    expect((await post(gw.url, event)).status).toBe(200);
    const inbound = await nextInbound(s.bus);
    expect(inbound).toMatchObject({ senderId: alice.id, content: "over http", chatId: s.dmChat(alice) });
    // Slack retries an event it thinks was not received: same event_id, X-Slack-Retry-Num.
    expect((await post(gw.url, event, { headers: { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" } })).status).toBe(200);

    expect((await post(gw.url, callback(s, "Ev002", "forged"), { secret: "wrong" })).status).toBe(401);
    expect((await post(gw.url, callback(s, "Ev003", "stale"), { timestamp: 1000 - 301 })).status).toBe(401);
    const unsigned = await fetch(`${gw.url}/slack/events`, { method: "POST", body: JSON.stringify(callback(s, "Ev004", "unsigned")) });
    expect(unsigned.status).toBe(401);

    // The gateway's own app still answers every other path.
    expect((await fetch(`${gw.url}/api/anything`)).status).toBe(418);
    await reply(s, inbound.chatId, "h-1", "answer over the Web API");
    expect(s.sent().map((m) => m.text)).toEqual(["answer over the Web API"]);
    expect(s.bus.inboundSize()).toBe(0);
  });

  it("signs as Slack's documented example does", () => {
    const body =
      "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    expect(slackSignature("8f742231b10e8888abcd99yyyzzz85a5", "1531420618", body)).toBe("v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503");
  });

  it("refuses mode http without the gateway's HTTP server", async () => {
    await expect(start({ mode: "http", signingSecret: SECRET })).rejects.toThrow(/channels\.slack\.mode "http" needs the gateway's HTTP server/);
  });
});
