/**
 * The channel kit's adapter for personal WeChat: the real channel over the fake iLink bot API
 * and CDN. A long poll is the event stream: dropping it cuts the waiting getupdates request, and
 * the next getupdates is the reconnection. WeChat bots talk one to one; a group reaches them
 * only as a `…@chatroom` sender, with no mention or reply to address the bot.
 */
import { join } from "node:path";
import type { ChannelManager } from "../../../src/channels/channel-manager.js";
import { writeJsonFileAtomic } from "../../../src/channels/json-file.js";
import { WEIXIN_TOKEN, startFakeWeixin } from "../helpers/fake-weixin.js";
import type { FakeWeixin } from "../helpers/fake-weixin.js";
import { tempHome, waitFor } from "../helpers/harness.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

export const WEIXIN_GROUP = "family-group-0001@chatroom";

export interface WeixinSession extends KitSession {
  fake: FakeWeixin;
  manager: ChannelManager;
}

export async function startWeixin(config: Record<string, unknown> = {}, options: { switches?: Record<string, unknown> } = {}): Promise<WeixinSession> {
  const fake = await startFakeWeixin();
  const home = await tempHome();
  // Alice wrote to the bot before (WeChat lets a bot write only under a context token of hers):
  // her token is in account.json, where the channel keeps it between runs.
  const alice = weixinPlatform.users.alice.id;
  await writeJsonFileAtomic(join(home.dir, "weixin", "account.json"), { token: WEIXIN_TOKEN, get_updates_buf: "", context_tokens: { [alice]: fake.issueContext(alice) }, typing_tickets: {}, base_url: fake.url });
  const kit = await startKitManager({ channel: "weixin", fake, home, switches: options.switches, entry: { token: WEIXIN_TOKEN, baseUrl: fake.url, cdnBaseUrl: fake.cdnUrl, ...config } });
  let pollsAtDrop: number | undefined;
  let connections = 1;
  return {
    ...kit,
    fake,
    groupChat: WEIXIN_GROUP,
    dmChat: (user) => user.id,
    async userSays(user, text, where, attachment) {
      const from = where.chat === "dm" ? user.id : WEIXIN_GROUP;
      const media = attachment ? (attachment.mimeType.startsWith("image/") ? { image: { content: attachment.content } } : { file: { name: attachment.name, content: attachment.content } }) : {};
      const polls = fake.callsOf("getupdates").length;
      const id = fake.userSays({ from, text, ...media });
      // Accepted once a getupdates has carried it away.
      await waitFor(() => fake.callsOf("getupdates").length > polls || undefined, "the poll that carries the message");
      return id;
    },
    sent() {
      return fake.sent.map((m) => ({ chatId: m.to, text: m.text ?? "", edits: [], files: m.file ? [{ name: m.file.name, content: m.file.content }] : [], ...(m.replyTo ? { replyTo: m.replyTo } : {}) }));
    },
    failNextSends(count) {
      fake.failSends(502, count);
    },
    async dropConnection() {
      await waitFor(() => fake.waitingPolls() > 0, "a waiting long poll");
      pollsAtDrop = fake.callsOf("getupdates").length;
      if (fake.dropPolls() === 0) throw new Error("no long poll was cut");
    },
    connections() {
      if (pollsAtDrop !== undefined && fake.callsOf("getupdates").length > pollsAtDrop) {
        pollsAtDrop = undefined;
        connections++;
      }
      return connections;
    },
    typing: () => fake.typing.filter((t) => t.status === 1).map((t) => t.user),
  };
}

export const weixinPlatform: KitPlatform = {
  channel: "weixin",
  textLimit: 1800,
  // iLink cannot edit a sent message: a streamed reply is sent once, at its end.
  edits: false,
  groups: "WeChat's iLink bot API is one to one: a group reaches the bot only as a …@chatroom sender, refused unless that chatroom id is in allowFrom",
  typing: true,
  typingRefreshMs: 5000,
  users: { alice: { id: "o9cq80-alice@im.wechat", username: "alice" }, mallory: { id: "o9cq80-mallory@im.wechat", username: "mallory" } },
  // Every reply goes out under the context token of the user's latest message: that is the reply link.
  replyConfig: {},
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startWeixin(config, options),
};
