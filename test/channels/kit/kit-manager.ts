/**
 * The set-up every channel kit adapter shares: a temporary nanobot home, the bus (recording
 * delivery errors), the pairing store, a fake clock and a recording sleep, and the real
 * ChannelManager starting the one channel against its platform fake. `close` stops the channel,
 * then the fake, then removes the home.
 */
import type { Server } from "node:http";
import { InProcessBus } from "../../../src/bus/in-process-bus.js";
import type { BusError } from "../../../src/bus/types.js";
import { PairingStore, pairingStorePath } from "../../../src/channels/access/pairing-store.js";
import { ChannelManager } from "../../../src/channels/channel-manager.js";
import { defaultChannelFactories } from "../../../src/channels/factories.js";
import { fakeClock, recordingSleep, tempHome } from "../helpers/harness.js";
import type { FakeClock } from "../helpers/harness.js";

export interface KitManagerOptions {
  /** The channel's name under `channels`. */
  channel: string;
  /** Its entry (`enabled: true` is added). */
  entry: Record<string, unknown>;
  /** Settings beside the channel under `channels` (sendMaxRetries, …). */
  switches?: Record<string, unknown> | undefined;
  /** The platform fake, closed after the channel. */
  fake: { close(): Promise<void> };
  /** A home made earlier (when the fake needs a folder in it); a new one otherwise. */
  home?: { dir: string; cleanup(): Promise<void> };
  /** The gateway's HTTP server, for channels that take webhooks on it. */
  httpServer?: Server | undefined;
}

export interface KitManager {
  manager: ChannelManager;
  bus: InProcessBus;
  busErrors: BusError[];
  store: PairingStore;
  clock: FakeClock;
  /** Waits the delivery queue asked for between retries (returned at once). */
  waits: number[];
  home: string;
  close(): Promise<void>;
}

export async function startKitManager(options: KitManagerOptions): Promise<KitManager> {
  const home = options.home ?? (await tempHome());
  const bus = new InProcessBus();
  const busErrors: BusError[] = [];
  bus.onError((e) => busErrors.push(e));
  const store = new PairingStore({ path: pairingStorePath(home.dir) });
  const clock = fakeClock(1_000_000);
  const { sleep, waits } = recordingSleep();
  const manager = new ChannelManager({
    bus,
    home: home.dir,
    channels: { ...options.switches, [options.channel]: { enabled: true, ...options.entry } },
    factories: defaultChannelFactories(),
    pairing: store,
    sleep,
    clock,
    ...(options.httpServer ? { httpServer: options.httpServer } : {}),
  });
  const close = async (): Promise<void> => {
    await manager.stopAll();
    await options.fake.close();
    await home.cleanup();
  };
  const [result] = await manager.startAll();
  if (!result?.ok) {
    await close();
    throw new Error(`${options.channel} did not start: ${result?.error}`);
  }
  return { manager, bus, busErrors, store, clock, waits, home: home.dir, close };
}
