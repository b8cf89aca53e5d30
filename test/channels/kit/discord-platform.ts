/** The channel kit's adapter for Discord: the real discord.js-based channel over the fake Discord platform. */
import type { ChannelManager } from "../../../src/channels/channel-manager.js";
import { DISCORD_BOT, DISCORD_GROUP_CHANNEL, DISCORD_TOKEN, startFakeDiscord } from "../helpers/fake-discord.js";
import type { FakeDiscord, FakeDiscordOptions } from "../helpers/fake-discord.js";
import { waitFor } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

export interface DiscordSession extends KitSession {
  fake: FakeDiscord;
  manager: ChannelManager;
  clock: FakeClock;
}

export async function startDiscord(
  config: Record<string, unknown> = {},
  options: { switches?: Record<string, unknown>; fake?: FakeDiscordOptions } = {},
): Promise<DiscordSession> {
  const fake = await startFakeDiscord(options.fake);
  const kit = await startKitManager({ channel: "discord", fake, switches: options.switches, entry: { token: DISCORD_TOKEN, apiRoot: fake.apiRoot, ...config } });
  // Messages the bot answered so far, for "reply" addressing.
  let botMessage: string | undefined;

  return {
    ...kit,
    fake,
    groupChat: DISCORD_GROUP_CHANNEL,
    dmChat: (user) => fake.dmChannel(user),
    async userSays(user, text, where, attachment) {
      const guild = where.chat === "group";
      let content = text;
      const extra: { mentions?: Array<{ id: string; username: string }>; replyToBotMessage?: string } = {};
      if (where.chat === "group" && where.address === "mention") {
        content = `<@${DISCORD_BOT.id}> ${text}`;
        extra.mentions = [DISCORD_BOT];
      }
      if (where.chat === "group" && where.address === "reply") {
        if (!botMessage) {
          // The bot must have said something in the group to be replied to.
          await kit.bus.publishOutbound({ kind: "message", channel: "discord", chatId: DISCORD_GROUP_CHANNEL, id: `seed-${Date.now()}`, content: "earlier answer" });
          botMessage = fake.messages.at(-1)!.id;
        }
        extra.replyToBotMessage = botMessage;
      }
      return fake.dispatchMessage({
        author: user,
        content,
        guild,
        ...extra,
        ...(attachment ? { attachment: { name: attachment.name, contentType: attachment.mimeType, content: attachment.content } } : {}),
      });
    },
    sent() {
      return fake.messages
        .filter((m) => m.content !== "earlier answer")
        .map((m) => ({ chatId: m.channelId, text: m.content, edits: m.edits, files: m.files, ...(m.replyTo ? { replyTo: m.replyTo } : {}) }));
    },
    failNextSends(count) {
      fake.failNext("POST /channels/:id/messages", 502, count);
    },
    async dropConnection() {
      await waitFor(() => fake.liveSockets() > 0, "a live gateway socket");
      fake.dropGateway();
    },
    connections: () => fake.sessions(),
    typing: () => [...fake.typing],
  };
}

export const discordPlatform: KitPlatform = {
  channel: "discord",
  textLimit: 2000,
  edits: true,
  typing: true,
  typingRefreshMs: 8000,
  users: { alice: { id: "2000000000000000001", username: "alice" }, mallory: { id: "3000000000000000001", username: "mallory" } },
  // Discord threads every reply that names the asking message; nothing to switch on.
  replyConfig: {},
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startDiscord(config, options),
};
