/**
 * WeChat specifics beyond the channel kit, against the fake iLink API: the wire format (headers,
 * base_info, sendmessage body), the token and account.json (refusal without one, the cursor kept
 * across runs), inbound media and text forms, the per-context-token budget and deferred replies,
 * a stale bot token, tool hints, text sanitizing, and the Python keys nanobot cannot honour.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import { ChannelManager } from "../../src/channels/channel-manager.js";
import { channelSettingNotes } from "../../src/channels/channel-types.js";
import { defaultChannelFactories } from "../../src/channels/factories.js";
import { sanitizeWeixinText } from "../../src/channels/weixin/text.js";
import { WEIXIN_TOKEN, startFakeWeixin } from "./helpers/fake-weixin.js";
import { nextInbound, tempHome, waitFor } from "./helpers/harness.js";
import { startWeixin, weixinPlatform } from "./kit/weixin-platform.js";
import type { WeixinSession } from "./kit/weixin-platform.js";

const alice = weixinPlatform.users.alice.id;
let session: WeixinSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

describe("weixin wire format", () => {
  it("sends the iLink headers and base_info, and replies with a bot message under the user's context token", async () => {
    session = await startWeixin({ allowFrom: [alice], routeTag: "route-9" });
    const id = await session.userSays(weixinPlatform.users.alice, "hi", { chat: "dm" });
    const inbound = await nextInbound(session.bus);
    await session.bus.publishOutbound({ kind: "message", channel: "weixin", chatId: inbound.chatId, id: "w-1", content: "hello" });
    const send = session.fake.callsOf("sendmessage")[0]!;
    expect(send.headers).toMatchObject({ authorization: `Bearer ${WEIXIN_TOKEN}`, authorizationtype: "ilink_bot_token", "ilink-app-id": "bot", "ilink-app-clientversion": String((2 << 16) | (4 << 8) | 6), skroutetag: "route-9" });
    expect(Buffer.from(String(send.headers["x-wechat-uin"]), "base64").toString()).toMatch(/^\d+$/);
    expect(send.body.base_info).toMatchObject({ channel_version: "2.4.6" });
    expect(send.body.msg).toMatchObject({ from_user_id: "", to_user_id: alice, message_type: 2, message_state: 2, item_list: [{ type: 1, text_item: { text: "hello" } }] });
    expect((send.body.msg as { client_id: string }).client_id).toMatch(/^nanobot-[0-9a-f]{20}$/);
    expect(session.fake.sent[0]!.replyTo).toBe(id);
    expect(session.fake.callsOf("msg/notifystart")).toHaveLength(1);
  });
});

describe("weixin token and account.json", () => {
  it("refuses to start without a token, naming channels.weixin.token and the login command", async () => {
    const home = await tempHome();
    const manager = new ChannelManager({ bus: new InProcessBus(), home: home.dir, channels: { weixin: { enabled: true, baseUrl: "http://127.0.0.1:9" } }, factories: defaultChannelFactories() });
    const [result] = await manager.startAll();
    expect(result?.ok).toBe(false);
    expect(result?.error).toContain("channels.weixin.token: expected a WeChat bot token — run `nanobot channels login weixin`");
    await home.cleanup();
  });

  it("keeps the getupdates cursor in account.json and resumes from it", async () => {
    session = await startWeixin({ allowFrom: [alice] });
    await session.userSays(weixinPlatform.users.alice, "one", { chat: "dm" });
    await nextInbound(session.bus);
    const path = join(session.home, "weixin", "account.json");
    const saved = await waitFor(() => {
      const account = JSON.parse(readFileSync(path, "utf8")) as { get_updates_buf: string; context_tokens: Record<string, string> };
      return account.get_updates_buf === "cursor-1" && account.context_tokens[alice]?.startsWith("ctx-1000-") ? account : undefined;
    }, "the saved cursor and context token");
    expect(saved).toMatchObject({ token: WEIXIN_TOKEN, base_url: session.fake.url });
    await waitFor(() => session!.fake.callsOf("getupdates").some((c) => c.body.get_updates_buf === "cursor-1"), "a poll with the cursor");
  });
});

describe("weixin inbound", () => {
  it("decrypts a file whose key is base64 of its hex spelling, and reads voice transcripts and quotes", async () => {
    session = await startWeixin({ allowFrom: [alice] });
    session.fake.userSays({ from: alice, text: "see file", file: { name: "notes.txt", content: "secret notes" } });
    const withFile = await nextInbound(session.bus);
    expect(withFile.content).toBe("see file\n[file: notes.txt]");
    expect(withFile.media).toEqual([expect.objectContaining({ kind: "document", name: "notes.txt" })]);
    expect(await readFile(withFile.media![0]!.path!, "utf8")).toBe("secret notes");
    session.fake.userSays({ from: alice, voiceText: "remind me at five" });
    expect((await nextInbound(session.bus)).content).toBe("[voice] remind me at five");
    session.fake.userSays({ from: alice, text: "yes", quote: { title: "Plan", text: "shall we go?" } });
    expect((await nextInbound(session.bus)).content).toBe("[quoted: Plan | shall we go?]\nyes");
    session.fake.userSays({ from: alice, image: { content: "IMG", keyShape: "base64" } });
    const image = await nextInbound(session.bus);
    expect(image.content).toBe("[image]");
    expect(await readFile(image.media![0]!.path!, "utf8")).toBe("IMG");
  });
});

describe("weixin context budget", () => {
  it("holds replies beyond contextMessageBudget until the user writes again, then sends them under the new token", async () => {
    session = await startWeixin({ allowFrom: [alice], contextMessageBudget: 1 });
    await session.userSays(weixinPlatform.users.alice, "q1", { chat: "dm" });
    const inbound = await nextInbound(session.bus);
    await session.bus.publishOutbound({ kind: "message", channel: "weixin", chatId: inbound.chatId, id: "b-1", content: "first" });
    await session.bus.publishOutbound({ kind: "message", channel: "weixin", chatId: inbound.chatId, id: "b-2", content: "second" });
    expect(session.fake.sent.map((m) => m.text)).toEqual(["first"]);
    expect(session.busErrors).toEqual([]);
    const again = await session.userSays(weixinPlatform.users.alice, "q2", { chat: "dm" });
    await waitFor(() => session!.fake.sent.length === 2, "the deferred reply");
    expect(session.fake.sent[1]).toMatchObject({ text: "second", replyTo: again });
  });
});

describe("weixin strangers", () => {
  it("answers a stranger only with the pairing code: their context token is not kept for later messages", async () => {
    session = await startWeixin();
    const mallory = weixinPlatform.users.mallory;
    await session.userSays(mallory, "hello?", { chat: "dm" });
    await waitFor(() => session!.fake.sent.length === 1, "the pairing code");
    expect(session.fake.sent[0]!.text).toContain("pairing code");
    await session.bus.publishOutbound({ kind: "message", channel: "weixin", chatId: mallory.id, id: "s-1", content: "unsolicited" });
    expect(session.fake.sent).toHaveLength(1);
  });

  it("does not send a pairing code for a message without a context token", async () => {
    session = await startWeixin();
    session.fake.userSays({ from: weixinPlatform.users.mallory.id, text: "hi", noContext: true });
    await session.userSays(weixinPlatform.users.alice, "me too", { chat: "dm" });
    await waitFor(() => session!.fake.sent.length === 1, "alice's pairing code");
    expect(session.fake.sent.map((m) => m.to)).toEqual([alice]);
  });
});

describe("weixin stale token", () => {
  it("pauses polling with the expired login in the status, and resumes with the token a new login stores", async () => {
    session = await startWeixin({ allowFrom: [alice] });
    session.fake.token = "a-newer-token";
    session.fake.dropPolls();
    const channel = session.manager.get("weixin")!;
    const status = await waitFor(() => (channel.status?.().connected === false ? channel.status() : undefined), "the disconnected status");
    expect(status.lastError).toContain("nanobot channels login weixin --force");
    // A login replaces the configured token in account.json; the paused poller picks it up.
    const account = JSON.parse(readFileSync(join(session.home, "weixin", "account.json"), "utf8")) as Record<string, unknown>;
    const replaced = createHash("sha256").update(WEIXIN_TOKEN).digest("hex");
    await writeFile(join(session.home, "weixin", "account.json"), JSON.stringify({ ...account, token: "a-newer-token", replaced_config_token_sha256: replaced }));
    session.clock.advance(30_000);
    await waitFor(() => channel.status?.().connected === true, "the reconnection with the new token");
    await session.userSays(weixinPlatform.users.alice, "back again", { chat: "dm" });
    expect((await nextInbound(session.bus)).content).toBe("back again");
    expect(session.fake.callsOf("getupdates").at(-1)!.headers.authorization).toBe("Bearer a-newer-token");
  });
});

describe("weixin progress and text", () => {
  it("gathers tool hints (sendToolHints) into one message before the reply; plain progress needs sendProgress", async () => {
    session = await startWeixin({ allowFrom: [alice], sendToolHints: true });
    const to = { channel: "weixin", chatId: alice };
    await session.bus.publishOutbound({ ...to, kind: "progress", text: "web_search(\"x\")", toolName: "web_search" });
    await session.bus.publishOutbound({ ...to, kind: "progress", text: "exec: ls", toolName: "exec" });
    await session.bus.publishOutbound({ ...to, kind: "progress", text: "thinking…" });
    await session.bus.publishOutbound({ ...to, kind: "message", id: "p-1", content: "done" });
    expect(session.fake.sent.map((m) => m.text)).toEqual(['web_search("x")\n\nexec: ls', "done"]);
  });

  it("sends a reply's image as an image item and sanitizes markup outside code", async () => {
    session = await startWeixin({ allowFrom: [alice] });
    const png = join(session.home, "chart.png");
    await writeFile(png, "PNG");
    await session.bus.publishOutbound({ kind: "message", channel: "weixin", chatId: alice, id: "i-1", content: "a <b> ~~c~~ `<ok>`", media: [{ kind: "image", path: png }] });
    expect(session.fake.sent.map((m) => m.file?.itemType ?? m.text)).toEqual([2, "a ＜b＞ c `<ok>`"]);
    expect(session.fake.sent[0]!.file!.content).toBe("PNG");
    expect(sanitizeWeixinText("##### Title\n![x](http://a)")).toBe("Title\n");
  });

  it("warns about the Python keys it cannot honour", () => {
    const notes = channelSettingNotes({ weixin: { enabled: true, streaming: false, blockStreaming: true, replyProgressMessages: true } });
    expect(notes).toEqual([expect.stringContaining("channels.weixin.replyProgressMessages: nanobot sends no structured tool-call cards"), expect.stringContaining("channels.weixin.blockStreaming has no effect with channels.weixin.streaming: false")]);
    expect(channelSettingNotes({ weixin: { enabled: true, blockStreaming: true, replyProgressMaxMessages: 3 } })).toEqual([expect.stringContaining("channels.weixin.replyProgressMaxMessages is ignored")]);
  });
});

describe("weixin block streaming", () => {
  it("asks for streamed deltas and sends paragraph blocks once blockStreamingMinChars are buffered, the rest at the end", async () => {
    session = await startWeixin({ allowFrom: [alice], blockStreaming: true, blockStreamingMinChars: 200, blockStreamingMaxMessages: 2 });
    await session.userSays(weixinPlatform.users.alice, "tell me a story", { chat: "dm" });
    const inbound = await nextInbound(session.bus);
    expect(inbound.metadata).toMatchObject({ stream: true });
    const to = { channel: "weixin", chatId: alice };
    const first = `Once ${"upon a time ".repeat(20)}there was a bot.`;
    const second = `It answered ${"every message ".repeat(20)}promptly.`;
    const third = "The end.";
    // Over 200 characters, but no paragraph break to end a block at yet.
    await session.bus.publishOutbound({ ...to, kind: "delta", streamId: "s-1", delta: first });
    expect(session.fake.sent).toEqual([]);
    await session.bus.publishOutbound({ ...to, kind: "delta", streamId: "s-1", delta: `\n\n${second}` });
    expect(session.fake.sent.map((m) => m.text)).toEqual([first]);
    // blockStreamingMaxMessages 2: the second message is the reply's end.
    await session.bus.publishOutbound({ ...to, kind: "delta", streamId: "s-1", delta: `\n\n${third}` });
    await session.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "s-1", id: "s-1-end", content: `${first}\n\n${second}\n\n${third}` });
    expect(session.fake.sent.map((m) => m.text)).toEqual([first, `${second}\n\n${third}`]);
  });
});

describe("weixin without a fake session", () => {
  it("the fake refuses a send under a context token it never issued", async () => {
    const fake = await startFakeWeixin();
    const response = await fetch(`${fake.url}/ilink/bot/sendmessage`, { method: "POST", headers: { authorization: `Bearer ${WEIXIN_TOKEN}`, authorizationtype: "ilink_bot_token" }, body: JSON.stringify({ msg: { to_user_id: alice, context_token: "made-up" } }) });
    expect(await response.json()).toMatchObject({ ret: -2 });
    await fake.close();
  });
});
