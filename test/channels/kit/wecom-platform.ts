/**
 * The channel kit's adapter for WeCom: the real channel (the official @wecom/aibot-node-sdk)
 * over the fake WeCom long connection. WeCom does not acknowledge a pushed message, so a
 * user's message counts as accepted once the fake has written it to the bot's socket.
 */
import type { ChannelManager } from "../../../src/channels/channel-manager.js";
import { WECOM_BOT_ID, WECOM_GROUP, WECOM_SECRET, startFakeWecom } from "../helpers/fake-wecom.js";
import type { FakeWecom } from "../helpers/fake-wecom.js";
import { waitFor } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

export interface WecomSession extends KitSession {
  fake: FakeWecom;
  manager: ChannelManager;
  clock: FakeClock;
}

export async function startWecom(config: Record<string, unknown> = {}, options: { switches?: Record<string, unknown> } = {}): Promise<WecomSession> {
  const fake = await startFakeWecom();
  const kit = await startKitManager({ channel: "wecom", fake, switches: options.switches, entry: { botId: WECOM_BOT_ID, secret: WECOM_SECRET, wsUrl: fake.wsUrl, ...config } });
  return {
    ...kit,
    fake,
    groupChat: WECOM_GROUP,
    dmChat: (user) => user.id,
    async userSays(user, text, where, attachment) {
      const group = where.chat === "group";
      await waitFor(() => fake.liveSockets() > 0, "a subscribed bot");
      return fake.pushMessage({
        from: user,
        text,
        group,
        atBot: group && where.address === "mention",
        quote: group && where.address === "reply",
        ...(attachment ? { attachment: { name: attachment.name, contentType: attachment.mimeType, content: attachment.content } } : {}),
      });
    },
    sent() {
      return fake.messages.map((m) => ({ chatId: m.chatId, text: m.text, edits: m.edits, files: m.files, ...(m.replyTo ? { replyTo: m.replyTo } : {}) }));
    },
    failNextSends(count) {
      fake.failNextSends(count, -1);
    },
    async dropConnection() {
      await waitFor(() => fake.liveSockets() > 0, "a live socket");
      fake.dropConnections();
    },
    connections: () => fake.subscriptions(),
    typing: () => [],
  };
}

export const wecomPlatform: KitPlatform = {
  channel: "wecom",
  textLimit: 6000,
  // As the Python nanobot, a reply goes out as one finished stream message.
  edits: false,
  typing: "WeCom shows AI bots no typing indicator",
  users: { alice: { id: "alice.zhang", username: "alice" }, mallory: { id: "mallory.li", username: "mallory" } },
  // A reply answers the asking message's frame; nothing to switch on.
  replyConfig: {},
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startWecom(config, options),
};
