/** The channel kit's adapter for NapCat: the real channel over the fake OneBot v11 server. */
import { InProcessBus } from "../../../src/bus/in-process-bus.js";
import type { BusError } from "../../../src/bus/types.js";
import { PairingStore, pairingStorePath } from "../../../src/channels/access/pairing-store.js";
import { ChannelManager } from "../../../src/channels/channel-manager.js";
import { defaultChannelFactories } from "../../../src/channels/factories.js";
import { NAPCAT_GROUP, NAPCAT_TOKEN, startFakeNapcat } from "../helpers/fake-napcat.js";
import type { FakeNapcat } from "../helpers/fake-napcat.js";
import { fakeClock, recordingSleep, tempHome, waitFor } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";
import type { KitPlatform, KitSession } from "./kit-types.js";

export interface NapcatSession extends KitSession {
  fake: FakeNapcat;
  manager: ChannelManager;
  clock: FakeClock;
}

export async function startNapcat(config: Record<string, unknown> = {}, options: { switches?: Record<string, unknown> } = {}): Promise<NapcatSession> {
  const fake = await startFakeNapcat();
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
    channels: { ...options.switches, napcat: { enabled: true, wsUrl: fake.url, accessToken: NAPCAT_TOKEN, ...config } },
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
    throw new Error(`napcat did not start: ${result?.error}`);
  }
  const chatOf = (type: "private" | "group", id: number): string => `${type}:${id}`;
  return {
    fake,
    manager,
    bus,
    store,
    clock,
    waits,
    busErrors,
    home: home.dir,
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
    async close() {
      await manager.stopAll();
      await fake.close();
      await home.cleanup();
    },
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
  // A reply naming the asking message quotes it with a reply segment; nothing to switch on.
  replyConfig: {},
  codeBlocksClosed: (text) => (text.match(/^```/gm) ?? []).length % 2 === 0,
  start: (config, options) => startNapcat(config, options),
};
