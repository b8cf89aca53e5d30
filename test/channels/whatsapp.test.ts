/**
 * WhatsApp (Cloud API) specifics beyond the channel kit: the webhook's subscription check and
 * signature refusals, the required keys and the Python keys nanobot cannot honour, "+" in
 * allowFrom, group sends, which Graph failures are retried, and events that are not messages.
 */
import { afterEach, describe, expect, it } from "vitest";
import { InProcessBus } from "../../src/bus/in-process-bus.js";
import { ChannelManager } from "../../src/channels/channel-manager.js";
import { channelSettingNotes } from "../../src/channels/channel-types.js";
import { defaultChannelFactories } from "../../src/channels/factories.js";
import { WA_GROUP, WA_VERIFY_TOKEN } from "./helpers/fake-whatsapp.js";
import { nextInbound, tempHome } from "./helpers/harness.js";
import { WA_CONFIG, startWhatsApp } from "./kit/whatsapp-platform.js";
import type { WhatsAppSession } from "./kit/whatsapp-platform.js";

let session: WhatsAppSession | undefined;

afterEach(async () => {
  await session?.close();
  session = undefined;
});

async function start(config: Record<string, unknown>, switches: Record<string, unknown> = {}): Promise<WhatsAppSession> {
  session = await startWhatsApp(config, switches);
  return session;
}

async function startError(config: Record<string, unknown>): Promise<string | undefined> {
  const home = await tempHome();
  try {
    const manager = new ChannelManager({ bus: new InProcessBus(), home: home.dir, channels: { whatsapp: { enabled: true, ...config } }, factories: defaultChannelFactories() });
    const [result] = await manager.startAll();
    await manager.stopAll();
    return result?.error;
  } finally {
    await home.cleanup();
  }
}

describe("whatsapp config", () => {
  it("refuses to start without each Cloud API key, naming it", async () => {
    for (const key of ["accessToken", "phoneNumberId", "appSecret", "verifyToken"] as const) {
      const config: Record<string, unknown> = { ...WA_CONFIG, webhookPort: 0 };
      delete config[key];
      expect(await startError(config)).toMatch(new RegExp(`^channels\\.whatsapp\\.${key}: expected `));
    }
  });

  it("tells a Python (neonize) config that it needs the Cloud API keys, and warns about its session keys", async () => {
    const python = { enabled: true, allowFrom: ["15551110001"], groupPolicy: "open", databasePath: "~/.nanobot/whatsapp.db", lidMappings: { "123": "15551110001" } };
    expect(await startError(python)).toContain("channels.whatsapp.accessToken: expected a Cloud API access token");
    expect(await startError(python)).toContain("a Python WhatsApp Web session or bridge cannot be used");
    expect(channelSettingNotes({ whatsapp: python })).toEqual([expect.stringContaining("channels.whatsapp.databasePath, channels.whatsapp.lidMappings are ignored: they belong to the Python nanobot's WhatsApp Web (neonize) session")]);
    expect(channelSettingNotes({ whatsapp: { enabled: true, bridgeUrl: "ws://localhost:3001", bridgeToken: "t" } })).toEqual([expect.stringContaining("channels.whatsapp.bridgeUrl, channels.whatsapp.bridgeToken are ignored")]);
  });

  it("names a webhookPath without a leading slash", async () => {
    expect(await startError({ ...WA_CONFIG, webhookPort: 0, webhookPath: "hook" })).toMatch(/^channels\.whatsapp\.webhookPath: expected a path starting with "\/"/);
  });
});

describe("whatsapp webhook", () => {
  it("answers Meta's subscription check with the challenge, and refuses a wrong verify token", async () => {
    const s = await start({ allowFrom: ["*"] });
    expect(await s.fake.verify(WA_VERIFY_TOKEN, "challenge-123")).toEqual({ status: 200, body: "challenge-123" });
    expect((await s.fake.verify("wrong", "challenge-456")).status).toBe(403);
  });

  it("refuses events without a valid X-Hub-Signature-256 and forwards nothing", async () => {
    const s = await start({ allowFrom: ["*"] });
    const body = JSON.stringify({ object: "whatsapp_business_account", entry: [{ changes: [{ value: { messages: [{ from: "15551110001", id: "wamid.X", type: "text", text: { body: "forged" } }] } }] }] });
    expect(await s.fake.postRaw(body, undefined)).toBe(401);
    expect(await s.fake.postRaw(body, "sha256=" + "0".repeat(64))).toBe(401);
    await s.fake.push({ from: "15551110001", name: "alice", text: "genuine" });
    expect((await nextInbound(s.bus)).content).toBe("genuine");
    expect(s.bus.inboundSize()).toBe(0);
  });

  it("ignores status updates (sent, delivered, read)", async () => {
    const s = await start({ allowFrom: ["*"] });
    await s.fake.pushStatus("wamid.OUT1", "read");
    await s.fake.push({ from: "15551110001", name: "alice", text: "real" });
    expect(await nextInbound(s.bus)).toMatchObject({ content: "real", metadata: expect.objectContaining({ senderName: "alice" }) });
    expect(s.bus.inboundSize()).toBe(0);
  });
});

describe("whatsapp over the Cloud API", () => {
  it("matches allowFrom numbers written with +", async () => {
    const s = await start({ allowFrom: ["+15551110001"] });
    await s.fake.push({ from: "15551110001", name: "alice", text: "hi" });
    expect(await nextInbound(s.bus)).toMatchObject({ senderId: "15551110001", chatId: "15551110001" });
  });

  it("answers a group as a group (recipient_type group) and strips the @mention", async () => {
    const s = await start({ allowFrom: ["15551110001"], groupPolicy: "mention" });
    await s.fake.push({ from: "15551110001", name: "alice", groupId: WA_GROUP, text: "@15550009999 /new" });
    const inbound = await nextInbound(s.bus);
    expect(inbound).toMatchObject({ chatId: WA_GROUP, content: "/new", metadata: expect.objectContaining({ isDirect: false }) });
    await s.bus.publishOutbound({ kind: "message", channel: "whatsapp", chatId: WA_GROUP, id: "g1", content: "done" });
    expect(s.fake.messages.at(-1)).toMatchObject({ to: WA_GROUP, recipientType: "group", text: "done" });
  });

  it("retries a throttled send (code 131056) but not a refused token", async () => {
    const s = await start({ allowFrom: ["*"] }, { sendMaxRetries: 3 });
    s.fake.failNext("messages", 400, 1, 131056);
    await s.bus.publishOutbound({ kind: "message", channel: "whatsapp", chatId: "15551110001", id: "t1", content: "after a pause" });
    expect(s.fake.messages.map((m) => m.text)).toEqual(["after a pause"]);
    expect(s.waits).toEqual([1000]);
    s.fake.failNext("messages", 401, 1, 190);
    await s.bus.publishOutbound({ kind: "message", channel: "whatsapp", chatId: "15551110001", id: "t2", content: "never" });
    expect(s.waits).toEqual([1000]);
    expect(s.busErrors).toHaveLength(1);
  });

  it("reports the webhook listening as connected", async () => {
    const s = await start({ allowFrom: ["*"] });
    expect(s.manager.list()).toEqual([{ name: "whatsapp", type: "whatsapp", enabled: true, connected: true }]);
  });
});
