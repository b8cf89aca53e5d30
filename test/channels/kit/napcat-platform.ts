/** The channel kit's adapter for NapCat: the real channel over the fake OneBot v11 server. */
import type { ChannelManager } from "../../../src/channels/channel-manager.js";
import { NAPCAT_GROUP, NAPCAT_TOKEN, startFakeNapcat } from "../helpers/fake-napcat.js";
import type { FakeNapcat } from "../helpers/fake-napcat.js";
import { waitFor } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

export interface NapcatSession extends KitSession {
  fake: FakeNapcat;
  manager: ChannelManager;
  clock: FakeClock;
}

export async function startNapcat(config: Record<string, unknown> = {}, options: { switches?: Record<string, unknown> } = {}): Promise<NapcatSession> {
  const fake = await startFakeNapcat();
  const kit = await startKitManager({ channel: "napcat", fake, switches: options.switches, entry: { wsUrl: fake.url, accessToken: NAPCAT_TOKEN, ...config } });
  const chatOf = (type: "private" | "group", id: number): string => `${type}:${id}`;
  return {
    ...kit,
    fake,
    groupChat: chatOf("group", NAPCAT_GROUP),
    dmChat: (user) => chatOf("private", Number(user.id)),
    async userSays(user, text, where, attachment) {
      const id = fake.userSays({
        userId: Number(user.id),
        text,
        nickname: user.username,
        ...(where.chat === "group" ? { messageType: "group", address: where.address } : {}),
        ...(attachment ? { attachment: { ...attachment, as: attachment.mimeType.startsWith("image/") ? "image" : "file", withUrl: true } } : {}),
      });
      return String(id);
    },
    sent() {
      return fake.sent.map((m) => ({ chatId: chatOf(m.messageType, m.targetId), text: m.text, edits: [], files: m.files.map(({ name, content }) => ({ name, content })), ...(m.replyTo ? { replyTo: m.replyTo } : {}) }));
    },
    failNextSends(count) {
      fake.failNext("send_msg", count);
    },
    async dropConnection() {
      await waitFor(() => fake.liveSockets() > 0, "a live NapCat socket");
      fake.dropConnection();
    },
    connections: () => fake.connections(),
    typing: () => fake.typing.map((id) => chatOf("private", id)),
  };
}

export const napcatPlatform: KitPlatform = {
  channel: "napcat",
  textLimit: 3000,
  edits: false,
  // OneBot v11 has none; NapCat's set_input_status shows "typing…" in private chats.
  typing: true,
  typingRefreshMs: 5000,
  users: { alice: { id: "20001", username: "alice" }, mallory: { id: "20002", username: "mallory" } },
  // A group is one session for all its members, so each message names its sender (the fake sends the username as nickname).
  groupContent: (user, text) => `${user.username}: ${text}`,
  // A reply naming the asking message quotes it with a reply segment; nothing to switch on.
  replyConfig: {},
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startNapcat(config, options),
};
