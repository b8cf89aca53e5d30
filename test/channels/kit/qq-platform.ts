/** The channel kit's adapter for QQ: the real channel over the fake QQ bot platform. */
import type { ChannelManager } from "../../../src/channels/channel-manager.js";
import { QQ_APP_ID, QQ_GROUP, QQ_SECRET, startFakeQQ } from "../helpers/fake-qq.js";
import type { FakeQQ } from "../helpers/fake-qq.js";
import { waitFor } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

export interface QQSession extends KitSession {
  fake: FakeQQ;
  manager: ChannelManager;
  clock: FakeClock;
}

export async function startQQ(config: Record<string, unknown> = {}, options: { switches?: Record<string, unknown> } = {}): Promise<QQSession> {
  const fake = await startFakeQQ();
  // ackMessage "" here: the kit counts the bot's messages; qq.test.ts covers the acknowledgement.
  const kit = await startKitManager({ channel: "qq", fake, switches: options.switches, entry: { appId: QQ_APP_ID, secret: QQ_SECRET, apiBase: fake.url, tokenUrl: fake.tokenUrl, ackMessage: "", ...config } });
  return {
    ...kit,
    fake,
    groupChat: QQ_GROUP,
    dmChat: (user) => user.id,
    async userSays(user, text, where, attachment) {
      // QQ delivers a group message that @-mentions the bot, or replies to it (the QQ app adds the
      // @ to a reply), as GROUP_AT_MESSAGE_CREATE; any other group message as GROUP_MESSAGE_CREATE.
      const kind = where.chat === "dm" ? "c2c" : where.address === "none" ? "all" : "at";
      return fake.userSays({ author: user.id, content: text, where: kind, ...(attachment ? { attachment: { name: attachment.name, contentType: attachment.mimeType, content: attachment.content } } : {}) });
    },
    sent() {
      return fake.sent.map((m) => ({ chatId: m.chatId, text: m.content, edits: [], files: m.file ? [m.file] : [], ...(m.msgId ? { replyTo: m.msgId } : {}) }));
    },
    failNextSends(count) {
      fake.failNext("POST /v2/users/:id/messages", 502, count);
    },
    async dropConnection() {
      await waitFor(() => fake.liveSockets() > 0, "a live gateway socket");
      fake.dropGateway();
    },
    connections: () => fake.sessions(),
    typing: () => [],
  };
}

export const qqPlatform: KitPlatform = {
  channel: "qq",
  textLimit: 2000,
  edits: false,
  typing: "QQ's bot API has no typing indicator; ackMessage is sent instead",
  users: { alice: { id: "ALICEOPENIDAAAAAAAAAAAAAAAAAAAA1", username: "alice" }, mallory: { id: "MALLORYOPENIDAAAAAAAAAAAAAAAAAA1", username: "mallory" } },
  // Every reply passively answers the asking message (msg_id); nothing to switch on.
  replyConfig: {},
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startQQ(config, options),
};
