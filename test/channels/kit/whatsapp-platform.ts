/**
 * The channel kit's adapter for WhatsApp (Cloud API): the real channel with its webhook, against
 * the fake Graph API that also plays Meta's side of the webhook. A webhook has no lasting
 * connection: "dropping" it cuts the keep-alive connection Meta delivers over, and the platform
 * reconnects for its next delivery (a status update here, as Meta sends them all the time).
 */
import type { ChannelManager } from "../../../src/channels/channel-manager.js";
import type { WhatsAppChannel } from "../../../src/channels/whatsapp/whatsapp-channel.js";
import { WA_APP_SECRET, WA_BUSINESS_NUMBER, WA_GROUP, WA_PHONE_NUMBER_ID, WA_TOKEN, WA_VERIFY_TOKEN, startFakeWhatsApp } from "../helpers/fake-whatsapp.js";
import type { FakeWhatsApp } from "../helpers/fake-whatsapp.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

export interface WhatsAppSession extends KitSession {
  fake: FakeWhatsApp;
  manager: ChannelManager;
}

export const WA_CONFIG = { accessToken: WA_TOKEN, phoneNumberId: WA_PHONE_NUMBER_ID, appSecret: WA_APP_SECRET, verifyToken: WA_VERIFY_TOKEN } as const;

/** Starts the real channel through the ChannelManager against a fresh fake Cloud API. */
export async function startWhatsApp(config: Record<string, unknown>, switches: Record<string, unknown> = {}): Promise<WhatsAppSession> {
  const fake = await startFakeWhatsApp();
  const kit = await startKitManager({ channel: "whatsapp", fake, switches, entry: { ...WA_CONFIG, apiRoot: fake.apiRoot, webhookPort: 0, ...config } });
  const at = (kit.manager.get("whatsapp") as WhatsAppChannel).webhookAddress()!;
  fake.setWebhook(`http://${at.host}:${at.port}/whatsapp/webhook`);
  let botMessage: string | undefined;

  return {
    ...kit,
    fake,
    groupChat: WA_GROUP,
    dmChat: (user) => user.id,
    async userSays(user, text, where, attachment) {
      const base = { from: user.id, name: user.username };
      const media = attachment ? { media: { type: attachment.mimeType.startsWith("image/") ? ("image" as const) : ("document" as const), name: attachment.name, mimeType: attachment.mimeType, content: attachment.content } } : {};
      if (where.chat === "dm") return fake.push({ ...base, text, ...media });
      if (where.address === "reply" && botMessage === undefined) {
        // The bot must have said something in the group to be replied to.
        await kit.bus.publishOutbound({ kind: "message", channel: "whatsapp", chatId: WA_GROUP, id: `seed-${Date.now()}`, content: "earlier answer" });
        botMessage = fake.messages.at(-1)!.id;
      }
      return fake.push({
        ...base,
        groupId: WA_GROUP,
        text: where.address === "mention" ? `@${WA_BUSINESS_NUMBER} ${text}` : text,
        ...(where.address === "reply" ? { replyTo: botMessage! } : {}),
      });
    },
    sent() {
      return fake.messages
        .filter((m) => m.text !== "earlier answer")
        .map((m) => ({ chatId: m.to, text: m.text, edits: [], files: m.files.map((f) => ({ name: f.name, content: f.content })), ...(m.replyTo ? { replyTo: m.replyTo } : {}) }));
    },
    failNextSends(count) {
      fake.failNext("messages", 502, count);
    },
    async dropConnection() {
      fake.dropConnections();
      await fake.pushStatus(fake.messages.at(-1)?.id ?? "wamid.none", "delivered");
    },
    connections: () => fake.connections(),
    typing: () => [...fake.typing],
  };
}

export const whatsappPlatform: KitPlatform = {
  channel: "whatsapp",
  textLimit: 4096,
  // The Cloud API cannot edit a sent message: a streamed reply is sent once.
  edits: false,
  typing: true,
  typingRefreshMs: 20_000,
  users: { alice: { id: "15551110001", username: "alice" }, mallory: { id: "15556660006", username: "mallory" } },
  // A reply names the asking message (context.message_id) whenever the agent gives it.
  replyConfig: {},
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startWhatsApp(config, options?.switches),
};
