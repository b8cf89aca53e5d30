/** The channel kit's adapter for Slack: the real channel (Slack's SDKs, Socket Mode) over the fake Slack platform. */
import type { Server } from "node:http";
import type { ChannelManager } from "../../../src/channels/channel-manager.js";
import { SLACK_APP_TOKEN, SLACK_BOT, SLACK_BOT_TOKEN, SLACK_GROUP_CHANNEL, startFakeSlack } from "../helpers/fake-slack.js";
import type { FakeSlack } from "../helpers/fake-slack.js";
import { waitFor } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

export interface SlackSession extends KitSession {
  fake: FakeSlack;
  manager: ChannelManager;
  clock: FakeClock;
}

export async function startSlack(
  config: Record<string, unknown> = {},
  options: { switches?: Record<string, unknown>; httpServer?: Server } = {},
): Promise<SlackSession> {
  const fake = await startFakeSlack();
  const kit = await startKitManager({ channel: "slack", fake, switches: options.switches, httpServer: options.httpServer, entry: { botToken: SLACK_BOT_TOKEN, appToken: SLACK_APP_TOKEN, apiRoot: fake.apiRoot, ...config } });
  // A message of the bot's in the group, for "reply" addressing (a reply in its thread).
  let botMessage: string | undefined;

  return {
    ...kit,
    fake,
    groupChat: SLACK_GROUP_CHANNEL,
    dmChat: (user) => fake.dmChannel(user),
    async userSays(user, text, where, attachment) {
      const file = attachment ? { name: attachment.name, mimetype: attachment.mimeType, content: attachment.content } : undefined;
      if (where.chat === "dm") return fake.say({ user, text, ...(file ? { file } : {}) });
      if (where.address === "mention") {
        // Slack delivers both a `message` and an `app_mention` event for a mention.
        return fake.say({ user, text: `<@${SLACK_BOT.id}> ${text}`, channel: SLACK_GROUP_CHANNEL, appMention: true });
      }
      if (where.address === "reply") {
        if (!botMessage) {
          await kit.bus.publishOutbound({ kind: "message", channel: "slack", chatId: SLACK_GROUP_CHANNEL, id: `seed-${Date.now()}`, content: "earlier answer" });
          botMessage = fake.messages.at(-1)!.ts;
        }
        return fake.say({ user, text, channel: SLACK_GROUP_CHANNEL, threadTs: botMessage, parentUserId: SLACK_BOT.id });
      }
      return fake.say({ user, text, channel: SLACK_GROUP_CHANNEL });
    },
    sent() {
      return fake.messages
        .filter((m) => m.text !== "earlier answer" && !m.deleted)
        .map((m) => ({ chatId: m.channel, text: m.text, edits: m.edits, files: m.files, ...(m.threadTs ? { replyTo: m.threadTs } : {}) }));
    },
    failNextSends(count) {
      fake.failNext("chat.postMessage", count, { status: 503 });
    },
    async dropConnection() {
      await waitFor(() => fake.liveSockets() > 0, "a live Socket Mode connection");
      fake.dropSockets();
    },
    connections: () => fake.sessions(),
    // Slack has no bot typing indicator; the fake would record assistant.threads.setStatus.
    typing: () => fake.callsOf("assistant.threads.setStatus").map((c) => String(c.params.channel_id)),
  };
}

export const slackPlatform: KitPlatform = {
  channel: "slack",
  textLimit: 4000,
  edits: true,
  typing: "Slack has no typing indicator for bot messages; the channel puts the reactEmoji reaction (:eyes:) on the message it works on instead",
  users: { alice: { id: "U0ALICE", username: "alice" }, mallory: { id: "U0MALLORY", username: "mallory" } },
  // Slack DMs are not threaded by default (as the Python nanobot); nanobot's dm.replyInThread threads them.
  replyConfig: { dm: { replyInThread: true } },
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startSlack(config, options),
};
