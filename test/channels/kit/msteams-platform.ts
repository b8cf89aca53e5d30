/**
 * The channel kit's adapter for Microsoft Teams: the real botbuilder-based channel over the fake
 * Bot Framework (test/channels/helpers/fake-msteams.ts).
 *
 * What "connection" means here: Teams has no event stream the bot holds open; the Bot
 * Connector opens HTTP connections to the bot's messaging endpoint to deliver activities.
 * `connections()` counts those TCP connections, and `dropConnection()` restarts the fake's
 * server (Connector, token endpoint and key endpoints) and cuts every socket both ways, then
 * the Connector redelivers the activity whose request was cut — as the real Connector retries —
 * over a new connection. The kit then checks the channel keeps receiving, and the gate's
 * de-duplication keeps the redelivered activity from reaching the agent twice.
 */
import type { ChannelManager } from "../../../src/channels/channel-manager.js";
import type { MSTeamsChannel } from "../../../src/channels/msteams/msteams-channel.js";
import { TEAMS_APP_ID, TEAMS_APP_PASSWORD, TEAMS_GROUP_CHAT, startFakeTeams } from "../helpers/fake-msteams.js";
import type { FakeTeams } from "../helpers/fake-msteams.js";
import { tempHome } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";
import { startKitManager } from "./kit-manager.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

export interface TeamsSession extends KitSession {
  fake: FakeTeams;
  manager: ChannelManager;
  channel: MSTeamsChannel;
  clock: FakeClock;
}

/** The channel settings that point the real channel at a fake. */
export function teamsSettings(fake: FakeTeams): Record<string, unknown> {
  return {
    enabled: true,
    appId: TEAMS_APP_ID,
    appPassword: TEAMS_APP_PASSWORD,
    host: "127.0.0.1",
    port: 0,
    serviceUrl: fake.url,
    openIdMetadataUrl: fake.openIdMetadataUrl,
    loginUrl: fake.loginUrl,
    trustedServiceUrlHosts: ["127.0.0.1"],
  };
}

export async function startTeams(
  config: Record<string, unknown> = {},
  options: { switches?: Record<string, unknown>; home?: string; fake?: FakeTeams } = {},
): Promise<TeamsSession> {
  const fake = options.fake ?? (await startFakeTeams());
  const closeFake = options.fake ? () => Promise.resolve() : () => fake.close();
  const home = options.home ? { dir: options.home, cleanup: () => Promise.resolve() } : await tempHome();
  const kit = await startKitManager({ channel: "msteams", fake: { close: closeFake }, home, switches: options.switches, entry: { ...teamsSettings(fake), ...config } });
  const channel = kit.manager.get("msteams") as MSTeamsChannel;
  fake.setBotEndpoint(channel.endpoint()!);
  // A message of the bot's in the group, for "reply" addressing.
  let botMessage: string | undefined;

  return {
    ...kit,
    fake,
    channel,
    groupChat: TEAMS_GROUP_CHAT,
    dmChat: (user) => fake.dmConversation(user),
    async userSays(user, text, where, attachment) {
      const group = where.chat === "group";
      let replyToId: string | undefined;
      if (where.chat === "group" && where.address === "reply") {
        if (!botMessage) {
          await kit.bus.publishOutbound({ kind: "message", channel: "msteams", chatId: TEAMS_GROUP_CHAT, id: `seed-${Date.now()}`, content: "earlier answer" });
          botMessage = fake.messages.at(-1)!.id;
        }
        replyToId = botMessage;
      }
      return fake.userSays({
        user,
        text,
        group,
        mention: where.chat === "group" && where.address === "mention",
        ...(replyToId ? { replyToId } : {}),
        ...(attachment ? { attachment: { name: attachment.name, contentType: attachment.mimeType, content: attachment.content } } : {}),
      });
    },
    sent() {
      return fake.messages
        .filter((m) => m.text !== "earlier answer" && !m.deleted)
        .map((m) => ({ chatId: m.conversationId, text: m.text, edits: m.edits, files: m.files.map((f) => ({ name: f.name, content: f.content })), ...(m.replyTo ? { replyTo: m.replyTo } : {}) }));
    },
    failNextSends(count) {
      fake.failNext("POST /v3/conversations/:id/activities", 502, count);
      fake.failNext("POST /v3/conversations/:id/activities/:id", 502, count);
    },
    async dropConnection() {
      await fake.restart();
      const status = await fake.redeliverLast();
      if (status !== 200) throw new Error(`the redelivered activity got HTTP ${status}`);
    },
    connections: () => fake.botConnections(),
    typing: () => [...fake.typing],
  };
}

export const msteamsPlatform: KitPlatform = {
  channel: "msteams",
  textLimit: 4000,
  edits: true,
  typing: true,
  typingRefreshMs: 3000,
  users: {
    alice: { id: "aad-0000-alice", username: "alice" },
    mallory: { id: "aad-0000-mallory", username: "mallory" },
  },
  // replyInThread (default on) threads to the asking message; the kit's explicit replyTo wins.
  replyConfig: { replyInThread: true },
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startTeams(config, options),
};
