/**
 * The channel kit's adapter for DingTalk: the real channel (dingtalk-stream SDK for the stream,
 * fetch for the robot APIs) over the fake DingTalk platform. DingTalk robots cannot quote a
 * message; a reply sent through the asking message's session webhook (`replyToMessage`) is
 * the platform's reply to that message, so the fake reports that message as `replyTo`.
 */
import type { ChannelManager } from "../../../src/channels/channel-manager.js";
import { DINGTALK_CLIENT_ID, DINGTALK_CLIENT_SECRET, DINGTALK_GROUP, startFakeDingTalk } from "../helpers/fake-dingtalk.js";
import type { FakeDingTalk } from "../helpers/fake-dingtalk.js";
import { waitFor } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

export interface DingTalkSession extends KitSession {
  fake: FakeDingTalk;
  manager: ChannelManager;
  clock: FakeClock;
}

export async function startDingTalk(config: Record<string, unknown> = {}, options: { switches?: Record<string, unknown> } = {}): Promise<DingTalkSession> {
  const fake = await startFakeDingTalk();
  const kit = await startKitManager({ channel: "dingtalk", fake, switches: options.switches, entry: { clientId: DINGTALK_CLIENT_ID, clientSecret: DINGTALK_CLIENT_SECRET, apiRoot: fake.url, oapiRoot: fake.url, ...config } });
  return {
    ...kit,
    fake,
    groupChat: `group:${DINGTALK_GROUP}`,
    dmChat: (user) => user.id,
    async userSays(user, text, where, attachment) {
      const group = where.chat === "group";
      const acked = fake.acks.length;
      const msgId = fake.pushMessage({
        from: user,
        text,
        group,
        atBot: group && where.address === "mention",
        quotesBot: group && where.address === "reply",
        ...(attachment ? { attachment: { name: attachment.name, contentType: attachment.mimeType, content: attachment.content } } : {}),
      });
      // The platform has it once the client acknowledged the frame.
      await waitFor(() => fake.acks.length > acked, "the frame's acknowledgement");
      return msgId;
    },
    sent() {
      return fake.messages.map((m) => ({ chatId: m.chatId, text: m.text, edits: [], files: m.files, ...(m.replyTo ? { replyTo: m.replyTo } : {}) }));
    },
    failNextSends(count) {
      fake.failNextSends(count, 502);
    },
    async dropConnection() {
      await waitFor(() => fake.liveSockets() > 0, "a live stream socket");
      fake.dropConnections();
    },
    connections: () => fake.connections(),
    typing: () => [],
  };
}

export const dingtalkPlatform: KitPlatform = {
  channel: "dingtalk",
  textLimit: 5000,
  // DingTalk cannot edit a robot message (only AI cards can be updated).
  edits: false,
  typing: "DingTalk shows robots no typing indicator",
  users: { alice: { id: "0211223344556677", username: "alice" }, mallory: { id: "0299887766554433", username: "mallory" } },
  replyConfig: { replyToMessage: true },
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startDingTalk(config, options),
};
