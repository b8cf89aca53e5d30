/** Starts a real TelegramChannel (through the ChannelManager) against the fake Bot API. */
import { InProcessBus } from "../../../src/bus/in-process-bus.js";
import type { BusError } from "../../../src/bus/types.js";
import { PairingStore, pairingStorePath } from "../../../src/channels/access/pairing-store.js";
import { ChannelManager } from "../../../src/channels/channel-manager.js";
import { DeliveryQueue } from "../../../src/channels/delivery/delivery-queue.js";
import { defaultChannelFactories } from "../../../src/channels/factories.js";
import { BOT_TOKEN, startFakeBotApi } from "./fake-bot-api.js";
import type { FakeBotApi } from "./fake-bot-api.js";
import { fakeClock, recordingSleep, tempHome } from "./harness.js";
import type { FakeClock } from "./harness.js";

export interface TelegramSetup {
  fake: FakeBotApi;
  bus: InProcessBus;
  manager: ChannelManager;
  store: PairingStore;
  clock: FakeClock;
  waits: number[];
  busErrors: BusError[];
  home: string;
  close(): Promise<void>;
}

/**
 * `switches` sit beside the channel under `channels` (the Python nanobot's sendProgress,
 * sendMaxRetries); `realDelivery` lets the manager build its own delivery queue from them.
 */
export async function startTelegram(
  config: Record<string, unknown> = {},
  options: { switches?: Record<string, unknown>; realDelivery?: boolean } = {},
): Promise<TelegramSetup> {
  const fake = await startFakeBotApi();
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
    channels: { ...options.switches, telegram: { enabled: true, token: BOT_TOKEN, apiRoot: fake.url, pollingTimeoutS: 1, ...config } },
    factories: defaultChannelFactories(),
    pairing: store,
    ...(options.realDelivery ? {} : { delivery: new DeliveryQueue({ sleep }) }),
    clock,
  });
  const results = await manager.startAll();
  if (!results[0]?.ok) throw new Error(`telegram did not start: ${results[0]?.error}`);
  return {
    fake,
    bus,
    manager,
    store,
    clock,
    waits,
    busErrors,
    home: home.dir,
    async close() {
      await manager.stopAll();
      await fake.close();
      await home.cleanup();
    },
  };
}
