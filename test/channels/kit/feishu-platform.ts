/** The channel kit's adapter for Feishu: the real SDK-based channel over the fake Feishu Open Platform. */
import type { ChannelManager } from "../../../src/channels/channel-manager.js";
import { FEISHU_APP_ID, FEISHU_APP_SECRET, FEISHU_BOT, FEISHU_GROUP_CHAT, startFakeFeishu } from "../helpers/fake-feishu.js";
import type { FakeFeishu, FakeFeishuOptions, FeishuDispatch } from "../helpers/fake-feishu.js";
import { waitFor } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSession, KitUser } from "./kit-types.js";

export interface FeishuSession extends KitSession {
  fake: FakeFeishu;
  manager: ChannelManager;
  clock: FakeClock;
}

export async function startFeishu(
  config: Record<string, unknown> = {},
  options: { switches?: Record<string, unknown>; fake?: FakeFeishuOptions } = {},
): Promise<FeishuSession> {
  const fake = await startFakeFeishu(options.fake);
  const kit = await startKitManager({ channel: "feishu", fake, switches: options.switches, entry: { appId: FEISHU_APP_ID, appSecret: FEISHU_APP_SECRET, apiRoot: fake.url, ...config } });
  // A message of the bot's in the group, for "reply" addressing.
  let botMessage: string | undefined;
  const asUser = (user: KitUser): { openId: string; name: string } => ({ openId: user.id, name: user.username });

  return {
    ...kit,
    fake,
    groupChat: FEISHU_GROUP_CHAT,
    // Direct replies go to the user's open_id (as the Python nanobot's chat ids).
    dmChat: (user) => user.id,
    async userSays(user, text, where, attachment) {
      const dispatch: FeishuDispatch = { sender: asUser(user), text, group: where.chat === "group" };
      if (where.chat === "group" && where.address === "mention") dispatch.mentions = [FEISHU_BOT];
      if (where.chat === "group" && where.address === "reply") {
        if (!botMessage) {
          await kit.bus.publishOutbound({ kind: "message", channel: "feishu", chatId: FEISHU_GROUP_CHAT, id: `seed-${Date.now()}`, content: "earlier answer" });
          botMessage = fake.messages.at(-1)!.id;
        }
        dispatch.parentId = botMessage;
      }
      if (attachment) dispatch.attachment = { name: attachment.name, contentType: attachment.mimeType, content: attachment.content };
      return fake.dispatchMessage(dispatch);
    },
    sent() {
      return fake.messages
        .filter((m) => m.text !== "earlier answer")
        .map((m) => ({ chatId: m.chatId, text: m.text, edits: m.edits, files: m.files, ...(m.replyTo ? { replyTo: m.replyTo } : {}) }));
    },
    failNextSends(count) {
      fake.failNext("POST /open-apis/im/v1/messages", 502, count);
    },
    async dropConnection() {
      await waitFor(() => fake.liveSockets() > 0, "a live long connection");
      fake.dropConnection();
    },
    connections: () => fake.sessions(),
    // Feishu has no typing indicator (see `typing` below); nothing can be recorded.
    typing: () => [],
  };
}

export const feishuPlatform: KitPlatform = {
  channel: "feishu",
  textLimit: 4000,
  edits: true,
  typing: "Feishu's Open Platform has no typing indicator; the channel puts the reactEmoji reaction on the asking message instead (checked in feishu.test.ts)",
  users: { alice: { id: "ou_alice00000000000000000000000001", username: "alice" }, mallory: { id: "ou_mallory0000000000000000000000001", username: "mallory" } },
  // Feishu quotes the asking message only with replyToMessage (as the Python nanobot).
  replyConfig: { replyToMessage: true },
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startFeishu(config, options),
};
