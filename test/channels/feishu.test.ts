/**
 * Feishu specifics beyond the channel kit: the long-connection handshake and acknowledgements,
 * keys of `channels.feishu` (refusals, warnings, encryptKey, domain), the reactEmoji/doneEmoji
 * reactions (Feishu's stand-in for typing), mentions and topic sessions, message formats,
 * replies in topics, rate limits and uploads.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import { PairingStore, pairingStorePath } from "../../src/channels/access/pairing-store.js";
import { ChannelManager } from "../../src/channels/channel-manager.js";
import { channelSettingNotes } from "../../src/channels/channel-types.js";
import { defaultChannelFactories } from "../../src/channels/factories.js";
import { feishuBaseUrl, parseFeishuConfig } from "../../src/channels/feishu/config.js";
import { RESTART_DELAY_MS } from "../../src/channels/feishu/feishu-channel.js";
import { main } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/io.js";
import { FEISHU_APP_ID, FEISHU_APP_SECRET, FEISHU_BOT, FEISHU_GROUP_CHAT, startFakeFeishu } from "./helpers/fake-feishu.js";
import { fakeClock, nextInbound, recordingSleep, tempHome, waitFor } from "./helpers/harness.js";
import { startFeishu } from "./kit/feishu-platform.js";
import type { FeishuSession } from "./kit/feishu-platform.js";

let session: FeishuSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

const alice = { openId: "ou_alice00000000000000000000000001", name: "alice" };
const bob = { openId: "ou_bob0000000000000000000000000001", name: "bob" };

function reply(s: FeishuSession, chatId: string, id: string, content: string, extra: Record<string, unknown> = {}): Promise<void> {
  return s.bus.publishOutbound({ kind: "message", channel: "feishu", chatId, id, content, ...extra });
}

describe("feishu: long connection", () => {
  it("gets a tenant token and the endpoint with the app credentials, pings, and acknowledges each event", async () => {
    session = await startFeishu({ allowFrom: [alice.openId] });
    const { fake } = session;
    const token = fake.requests.find((r) => r.path === "/open-apis/auth/v3/tenant_access_token/internal");
    expect(token?.body).toEqual({ app_id: FEISHU_APP_ID, app_secret: FEISHU_APP_SECRET });
    const endpoint = fake.requests.find((r) => r.path === "/callback/ws/endpoint");
    expect(endpoint?.body).toEqual({ AppID: FEISHU_APP_ID, AppSecret: FEISHU_APP_SECRET });
    expect(fake.requests.some((r) => r.path === "/open-apis/bot/v3/info")).toBe(true);
    expect(session.manager.get("feishu")?.status?.()).toEqual({ connected: true });
    await waitFor(() => fake.pings() >= 1, "a ping");
    const id = fake.dispatchMessage({ sender: alice, text: "hi" });
    await nextInbound(session.bus);
    await waitFor(() => fake.acks.length === 1, "the acknowledgement");
    expect(fake.acks[0]).toMatchObject({ code: 200 });
    expect(id).toMatch(/^om_/);
  });

  it("refuses to start when the platform rejects the app secret, naming the reason", async () => {
    const fake = await startFakeFeishu({ appSecret: "the-real-secret" });
    const home = await tempHome();
    const manager = new ChannelManager({
      bus: new InProcessBus(),
      home: home.dir,
      channels: { feishu: { enabled: true, appId: FEISHU_APP_ID, appSecret: "wrong", apiRoot: fake.url } },
      factories: defaultChannelFactories(),
      pairing: new PairingStore({ path: pairingStorePath(home.dir) }),
      sleep: recordingSleep().sleep,
      clock: fakeClock(),
    });
    try {
      const [result] = await manager.startAll();
      expect(result).toMatchObject({ ok: false, error: expect.stringContaining("code=403") });
    } finally {
      await manager.stopAll();
      await fake.close();
      await home.cleanup();
    }
  });

  it("starts the long connection again, on the channel clock, after the SDK gave it up", async () => {
    session = await startFeishu({ allowFrom: [alice.openId] });
    const { fake, clock } = session;
    const status = (): unknown => session!.manager.get("feishu")?.status?.();
    fake.refuseEndpoint(1);
    fake.dropConnection();
    await waitFor(() => (status() as { connected: boolean }).connected === false && JSON.stringify(status()).includes("code=1"), "the given-up connection");
    const before = fake.sessions();
    fake.refuseEndpoint(undefined);
    clock.advance(RESTART_DELAY_MS - 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(fake.sessions()).toBe(before);
    clock.advance(1);
    await waitFor(() => fake.sessions() > before && (status() as { connected: boolean }).connected, "the restarted connection");
    fake.dispatchMessage({ sender: alice, text: "back again" });
    expect((await nextInbound(session.bus)).content).toBe("back again");
  });

  it("decrypts events pushed with the console's Encrypt Key (encryptKey)", async () => {
    session = await startFeishu({ allowFrom: [alice.openId], encryptKey: "enc-key-1" }, { fake: { encryptKey: "enc-key-1" } });
    session.fake.dispatchMessage({ sender: alice, text: "secret hello" });
    expect(await nextInbound(session.bus)).toMatchObject({ content: "secret hello", senderId: alice.openId });
  });

  it("ignores messages sent by bots", async () => {
    session = await startFeishu({ allowFrom: ["*"] });
    session.fake.dispatchMessage({ sender: bob, text: "from a bot", senderType: "bot" });
    session.fake.dispatchMessage({ sender: alice, text: "from a person" });
    expect((await nextInbound(session.bus)).content).toBe("from a person");
    expect(session.bus.inboundSize()).toBe(0);
  });
});

describe("feishu: channels.feishu keys", () => {
  it("refuses a missing appId or appSecret, and an App ID of the wrong shape, naming the key", () => {
    expect(() => parseFeishuConfig({ appSecret: "s" })).toThrow(/channels\.feishu\.appId: expected the App ID/);
    expect(() => parseFeishuConfig({ appId: FEISHU_APP_ID })).toThrow(/channels\.feishu\.appSecret: expected the App Secret/);
    expect(() => parseFeishuConfig({ appId: "my-app", appSecret: "s" }, "work")).toThrow(/channels\.work\.appId: expected an App ID such as cli_/);
    expect(() => parseFeishuConfig({ appId: FEISHU_APP_ID, appSecret: "s", domain: "weibo" })).toThrow(/channels\.feishu\.domain/);
  });

  it("takes the Python defaults and the domain's base URL", () => {
    const config = parseFeishuConfig({ appId: FEISHU_APP_ID, appSecret: "s" });
    expect(config).toMatchObject({ reactEmoji: "THUMBSUP", doneEmoji: null, groupPolicy: "mention", replyToMessage: false, streaming: true, domain: "feishu", topicIsolation: true });
    expect(feishuBaseUrl(config)).toBe("https://open.feishu.cn");
    expect(feishuBaseUrl(parseFeishuConfig({ appId: FEISHU_APP_ID, appSecret: "s", domain: "lark" }))).toBe("https://open.larksuite.com");
    expect(feishuBaseUrl(parseFeishuConfig({ appId: FEISHU_APP_ID, appSecret: "s", apiRoot: "http://127.0.0.1:9/" }))).toBe("http://127.0.0.1:9");
  });

  it("warns about the keys it reads but does not honour, and not about the Python defaults", () => {
    const pythonDefaults = { enabled: true, instanceId: "default", name: "nanobot", identityKey: "", appId: FEISHU_APP_ID, appSecret: "s", encryptKey: "", verificationToken: "" };
    expect(channelSettingNotes({ feishu: pythonDefaults })).toEqual([]);
    const notes = channelSettingNotes({ feishu: { ...pythonDefaults, verificationToken: "v", instances: [{ appId: FEISHU_APP_ID }], instanceId: "work", identityKey: "feishu:x", name: "Helper" } });
    expect(notes).toHaveLength(5);
    expect(notes.join("\n")).toMatch(/channels\.feishu\.verificationToken is not used: .*long connection/);
    expect(notes.join("\n")).toMatch(/channels\.feishu\.instances is not supported/);
    expect(notes.join("\n")).toMatch(/channels\.feishu\.instanceId .* ignored/);
  });
});

describe("feishu: config check with a Python config.json", () => {
  async function check(feishu: Record<string, unknown>): Promise<{ code: number; err: string }> {
    const root = await mkdtemp(join(tmpdir(), "nanobot-feishu-check-"));
    try {
      const doc = { providers: { custom: { apiBase: "http://127.0.0.1:9/v1", apiKey: "sk-feishu-check-0001" } }, agents: { defaults: { model: "custom/m", workspace: root } }, channels: { feishu } };
      await writeFile(join(root, "config.json"), JSON.stringify(doc));
      let err = "";
      const io: CliIo = { stdout: { write: () => undefined }, stderr: { write: (s: string) => (err += s) }, env: { HOME: root, NANOBOT_HOME: join(root, "nb") }, cwd: root };
      const code = await main(["node", "nanobot", "--config", join(root, "config.json"), "config", "check"], io);
      return { code, err };
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  }

  it("accepts an enabled Python channels.feishu and names the keys it ignores", async () => {
    const r = await check({ enabled: true, appId: FEISHU_APP_ID, appSecret: "s", verificationToken: "v", allowFrom: ["ou_x"] });
    expect(r.code).toBe(0);
    expect(r.err).not.toContain("does not have");
    expect(r.err).toContain("channels.feishu.verificationToken is not used");
  });
});

describe("feishu: reactions instead of typing", () => {
  it("puts reactEmoji on the asking message, removes it when the reply is sent, then adds doneEmoji", async () => {
    session = await startFeishu({ allowFrom: [alice.openId], doneEmoji: "DONE" });
    const { fake } = session;
    const asked = fake.dispatchMessage({ sender: alice, text: "work on it" });
    const inbound = await nextInbound(session.bus);
    await waitFor(() => fake.reactions.length === 1, "the reaction");
    expect(fake.reactions[0]).toMatchObject({ action: "add", messageId: asked, emoji: "THUMBSUP" });
    await reply(session, inbound.chatId, "r-1", "done");
    expect(fake.reactions.map((r) => [r.action, r.messageId, r.emoji])).toEqual([
      ["add", asked, "THUMBSUP"],
      ["remove", asked, "THUMBSUP"],
      ["add", asked, "DONE"],
    ]);
  });

  it("sends no reaction with reactEmoji empty, nor to a sender who is not let in", async () => {
    session = await startFeishu({ allowFrom: [alice.openId], reactEmoji: "" });
    session.fake.dispatchMessage({ sender: bob, text: "me too" });
    session.fake.dispatchMessage({ sender: alice, text: "hello" });
    await nextInbound(session.bus);
    await reply(session, alice.openId, "r-2", "hi");
    expect(session.fake.reactions).toEqual([]);
  });
});

describe("feishu: groups", () => {
  it("strips the bot's leading @mention (so /new works) and spells out other mentions", async () => {
    session = await startFeishu({ allowFrom: [alice.openId] });
    session.fake.dispatchMessage({ sender: alice, group: true, text: "/new", mentions: [FEISHU_BOT] });
    expect((await nextInbound(session.bus)).content).toBe("/new");
    session.fake.dispatchMessage({ sender: alice, group: true, text: "ask please", mentions: [FEISHU_BOT, bob] });
    expect((await nextInbound(session.bus)).content).toBe(`@bob (${bob.openId}, user id: u_bob) ask please`);
  });

  it("answers @all in mention mode, and ignores a mention of someone else", async () => {
    session = await startFeishu({ allowFrom: [alice.openId] });
    session.fake.dispatchMessage({ sender: alice, group: true, text: "for bob", mentions: [bob] });
    session.fake.dispatchMessage({ sender: alice, group: true, raw: { msgType: "text", content: { text: "@_all meeting now" } } });
    expect((await nextInbound(session.bus)).content).toBe("@_all meeting now");
    expect(session.bus.inboundSize()).toBe(0);
  });

  it("gives each topic its own session with topicIsolation, one per group without", async () => {
    session = await startFeishu({ allowFrom: [alice.openId], groupPolicy: "open" });
    const first = session.fake.dispatchMessage({ sender: alice, group: true, text: "new topic" });
    expect((await nextInbound(session.bus)).sessionKey).toBe(`feishu:${FEISHU_GROUP_CHAT}:${first}`);
    session.fake.dispatchMessage({ sender: alice, group: true, text: "in the topic", parentId: first, threadId: "omt_1" });
    expect(await nextInbound(session.bus)).toMatchObject({ sessionKey: `feishu:${FEISHU_GROUP_CHAT}:${first}`, metadata: { threadId: "omt_1", rootId: first } });
    await session.close();
    session = await startFeishu({ allowFrom: [alice.openId], groupPolicy: "open", topicIsolation: false });
    session.fake.dispatchMessage({ sender: alice, group: true, text: "anything" });
    expect((await nextInbound(session.bus)).sessionKey).toBe(`feishu:${FEISHU_GROUP_CHAT}`);
  });

  it("keeps every part of an answer to a topic message in the topic; replyToMessage opens a topic in a group", async () => {
    session = await startFeishu({ allowFrom: [alice.openId], groupPolicy: "open" });
    const inTopic = session.fake.dispatchMessage({ sender: alice, group: true, text: "q", parentId: "om_root", threadId: "omt_2" });
    const inbound = await nextInbound(session.bus);
    const long = ["a".repeat(3000), "b".repeat(3000)].join("\n\n");
    await reply(session, inbound.chatId, "t-1", long, { replyTo: inTopic });
    expect(session.fake.messages.map((m) => [m.chatId, m.replyTo, m.replyInThread])).toEqual([
      [FEISHU_GROUP_CHAT, inTopic, undefined],
      [FEISHU_GROUP_CHAT, inTopic, undefined],
    ]);
    await session.close();
    session = await startFeishu({ allowFrom: [alice.openId], groupPolicy: "open", replyToMessage: true });
    const asked = session.fake.dispatchMessage({ sender: alice, group: true, text: "q2" });
    await nextInbound(session.bus);
    await reply(session, FEISHU_GROUP_CHAT, "t-2", "answer", { replyTo: asked });
    expect(session.fake.messages.map((m) => [m.replyTo, m.replyInThread])).toEqual([[asked, true]]);
  });
});

describe("feishu: message formats", () => {
  it("sends short plain text as text, links as a post, markdown as a card (as the Python nanobot)", async () => {
    session = await startFeishu({ allowFrom: [alice.openId] });
    await reply(session, alice.openId, "f-1", "plain words");
    await reply(session, alice.openId, "f-2", "see [the docs](https://example.com/docs) now");
    await reply(session, alice.openId, "f-3", "**bold** and\n```js\nx()\n```");
    await reply(session, FEISHU_GROUP_CHAT, "f-4", "to the group");
    const [text, post, card, group] = session.fake.messages;
    expect(text).toMatchObject({ msgType: "text", chatId: alice.openId, content: JSON.stringify({ text: "plain words" }) });
    expect(JSON.parse(post!.content)).toEqual({ zh_cn: { content: [[{ tag: "text", text: "see " }, { tag: "a", text: "the docs", href: "https://example.com/docs" }, { tag: "text", text: " now" }]] } });
    expect(card).toMatchObject({ msgType: "interactive", text: "**bold** and\n```js\nx()\n```" });
    const sends = session.fake.requests.filter((r) => r.path === "/open-apis/im/v1/messages" && r.method === "POST");
    expect(sends.map((r) => r.query.receive_id_type)).toEqual(["open_id", "open_id", "open_id", "chat_id"]);
    expect(group!.chatId).toBe(FEISHU_GROUP_CHAT);
  });

  it("streams into a card it updates (message.patch), the final text last", async () => {
    session = await startFeishu({ allowFrom: [alice.openId] });
    const to = { channel: "feishu", chatId: alice.openId };
    await session.bus.publishOutbound({ ...to, kind: "delta", streamId: "s-1", delta: "Thinking" });
    await waitFor(() => session!.fake.messages.length === 1, "the preview card");
    await session.bus.publishOutbound({ ...to, kind: "stream_end", streamId: "s-1", id: "s-reply", content: "Final **answer**" });
    const [card] = session.fake.messages;
    expect(card).toMatchObject({ msgType: "interactive", text: "Final **answer**" });
    expect(JSON.parse(card!.content).config).toMatchObject({ update_multi: true });
    expect(session.fake.requests.filter((r) => r.method === "PATCH")).toHaveLength(1);
  });

  it("sends progress only with sendProgress, prefixed with toolHintPrefix", async () => {
    session = await startFeishu({ allowFrom: [alice.openId], sendProgress: true, toolHintPrefix: ">>" });
    await session.bus.publishOutbound({ kind: "progress", channel: "feishu", chatId: alice.openId, text: "exec: ls\nexec: pwd", toolName: "exec" });
    await session.bus.publishOutbound({ kind: "progress", channel: "feishu", chatId: alice.openId, text: "Model request failed, retry in 1s" });
    expect(session.fake.messages.map((m) => m.text)).toEqual([">> exec: ls\n>> exec: pwd", "Model request failed, retry in 1s"]);
  });
});

describe("feishu: rate limits and failures", () => {
  it("retries Feishu's 'too many requests' code and gives up at once on a refused message", async () => {
    session = await startFeishu({ allowFrom: [alice.openId] }, { switches: { sendMaxRetries: 3 } });
    session.fake.failNext("POST /open-apis/im/v1/messages", 400, 1, { code: 99991400, msg: "request trigger frequency limit" });
    await reply(session, alice.openId, "rl-1", "after the limit");
    expect(session.fake.messages.map((m) => m.text)).toEqual(["after the limit"]);
    expect(session.waits).toEqual([1000]);
    session.fake.failNext("POST /open-apis/im/v1/messages", 400, 1, { code: 230002, msg: "bot not in chat" });
    await reply(session, alice.openId, "rl-2", "refused");
    expect(session.waits).toEqual([1000]);
    await waitFor(() => session!.busErrors.length === 1, "the reported failure");
    expect(String((session.busErrors[0]!.error as { cause?: unknown }).cause)).toMatch(/code 230002 \(bot not in chat\)/);
  });
});

describe("feishu: media", () => {
  it("uploads an image with image.create and sends an image message", async () => {
    session = await startFeishu({ allowFrom: [alice.openId] });
    const png = join(session.home, "chart.png");
    await writeFile(png, "PNG-DATA");
    await reply(session, alice.openId, "m-1", "", { media: [{ kind: "image", path: png }] });
    expect(session.fake.messages.map((m) => [m.msgType, m.files])).toEqual([["image", [{ name: "chart.png", content: "PNG-DATA" }]]]);
    expect(session.fake.requests.find((r) => r.path === "/open-apis/im/v1/images")?.body).toMatchObject({ image_type: "message" });
  });

  it("downloads a file message's resource under its own name", async () => {
    session = await startFeishu({ allowFrom: [alice.openId] });
    session.fake.dispatchMessage({ sender: alice, attachment: { name: "notes.txt", contentType: "text/plain", content: "NOTES" } });
    const inbound = await nextInbound(session.bus);
    expect(inbound.media).toHaveLength(1);
    expect(inbound.media![0]).toMatchObject({ kind: "document", name: "notes.txt" });
    expect(await readFile(inbound.media![0]!.path!, "utf8")).toBe("NOTES");
    expect(session.fake.requests.find((r) => r.path.includes("/resources/"))?.query).toEqual({ type: "file" });
  });
});
