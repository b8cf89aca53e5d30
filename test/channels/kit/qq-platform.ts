/** The channel kit's adapter for QQ: the real channel over the fake QQ bot platform. */
import { InProcessBus } from "../../../src/bus/in-process-bus.js";
import type { BusError } from "../../../src/bus/types.js";
import { PairingStore, pairingStorePath } from "../../../src/channels/access/pairing-store.js";
import { ChannelManager } from "../../../src/channels/channel-manager.js";
import { defaultChannelFactories } from "../../../src/channels/factories.js";
import { QQ_APP_ID, QQ_GROUP, QQ_SECRET, startFakeQQ } from "../helpers/fake-qq.js";
import type { FakeQQ } from "../helpers/fake-qq.js";
import { fakeClock, recordingSleep, tempHome, waitFor } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

export interface QQSession extends KitSession {
  fake: FakeQQ;
  manager: ChannelManager;
  clock: FakeClock;
}

export async function startQQ(config: Record<string, unknown> = {}, options: { switches?: Record<string, unknown> } = {}): Promise<QQSession> {
  const fake = await startFakeQQ();
  const home = await tempHome();
  const bus = new InProcessBus();
  const busErrors: BusError[] = [];
  bus.onError((e) => busErrors.push(e));
  const store = new PairingStore({ path: pairingStorePath(home.dir) });
  const clock = fakeClock(1_000_000);
  const { sleep, waits } = recordingSleep();
  const manager = new ChannelManager({
    bus,
    home: home.dir,
    // ackMessage "" here: the kit counts the bot's messages; qq.test.ts covers the acknowledgement.
    channels: { ...options.switches, qq: { enabled: true, appId: QQ_APP_ID, secret: QQ_SECRET, apiBase: fake.url, tokenUrl: fake.tokenUrl, ackMessage: "", ...config } },
    factories: defaultChannelFactories(),
    pairing: store,
    sleep,
    clock,
  });
  const [result] = await manager.startAll();
  if (!result?.ok) {
    await manager.stopAll();
    await fake.close();
    await home.cleanup();
    throw new Error(`qq did not start: ${result?.error}`);
  }
  return {
    fake,
    manager,
    bus,
    store,
    clock,
    waits,
    busErrors,
    home: home.dir,
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
    async close() {
      await manager.stopAll();
      await fake.close();
      await home.cleanup();
    },
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
