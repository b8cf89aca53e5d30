/** The channel kit's adapter for Mattermost: the real Client4-based channel over the fake Mattermost server. */
import type { ChannelManager } from "../../../src/channels/channel-manager.js";
import { MATTERMOST_BOT, MATTERMOST_GROUP_CHANNEL, MATTERMOST_TOKEN, startFakeMattermost } from "../helpers/fake-mattermost.js";
import type { FakeMattermost } from "../helpers/fake-mattermost.js";
import { waitFor } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

export interface MattermostSession extends KitSession {
  fake: FakeMattermost;
  manager: ChannelManager;
  clock: FakeClock;
}

const SEED = "earlier answer";

export async function startMattermost(config: Record<string, unknown> = {}, options: { switches?: Record<string, unknown> } = {}): Promise<MattermostSession> {
  const fake = await startFakeMattermost();
  const kit = await startKitManager({ channel: "mattermost", fake, switches: options.switches, entry: { serverUrl: fake.url, token: MATTERMOST_TOKEN, ...config } });
  let botPost: string | undefined;

  return {
    ...kit,
    fake,
    groupChat: MATTERMOST_GROUP_CHANNEL,
    dmChat: (user) => fake.dmChannel(user),
    async userSays(user, text, where, attachment) {
      let message = text;
      let rootId: string | undefined;
      let mentionsBot = false;
      if (where.chat === "group" && where.address === "mention") {
        message = `@${MATTERMOST_BOT.username} ${text}`;
        mentionsBot = true;
      }
      if (where.chat === "group" && where.address === "reply") {
        if (!botPost) {
          // The bot must have said something in the channel to be replied to.
          await kit.bus.publishOutbound({ kind: "message", channel: "mattermost", chatId: MATTERMOST_GROUP_CHANNEL, id: `seed-${Date.now()}`, content: SEED });
          botPost = fake.botPosts().at(-1)!.id;
        }
        rootId = botPost;
      }
      return fake.userPosts({
        author: user,
        message,
        ...(where.chat === "group" ? { channelId: MATTERMOST_GROUP_CHANNEL } : {}),
        ...(rootId ? { rootId } : {}),
        mentionsBot,
        ...(attachment ? { file: { name: attachment.name, mimeType: attachment.mimeType, content: attachment.content } } : {}),
      });
    },
    sent() {
      return fake
        .botPosts()
        .filter((p) => p.message !== SEED)
        .map((p) => ({
          chatId: p.channelId,
          text: p.message,
          edits: p.edits,
          files: p.fileIds.map((id) => ({ name: fake.files.get(id)!.name, content: fake.files.get(id)!.content })),
          ...(p.rootId ? { replyTo: p.rootId } : {}),
        }));
    },
    failNextSends(count) {
      fake.failNext("POST /posts", 502, count);
    },
    async dropConnection() {
      await waitFor(() => fake.liveSockets() > 0, "a live websocket");
      fake.dropSockets();
    },
    connections: () => fake.connections(),
    typing: () => [...fake.typing],
  };
}

export const mattermostPlatform: KitPlatform = {
  channel: "mattermost",
  textLimit: 16383,
  edits: true,
  typing: true,
  typingRefreshMs: 4000,
  users: { alice: { id: "aliceaaaaaaaaaaaaaaaaaaaaa", username: "alice" }, mallory: { id: "malloryaaaaaaaaaaaaaaaaaaa", username: "mallory" } },
  // Channel replies are threaded by default (replyInThread); direct messages only with nanobot's dmReplyInThread.
  replyConfig: { dmReplyInThread: true },
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startMattermost(config, options),
};
