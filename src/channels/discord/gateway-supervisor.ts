/**
 * The reconnect policy of the Discord gateway connection. discord.js 14 retries a lost gateway
 * every 500 ms for ever, and a client destroyed during that pause keeps retrying after
 * `destroy()` (a stopped channel would hold the process open). The supervisor wraps each
 * shard's connect: retries back off (at once, then 1 s, 2 s, 4 s … 60 s; reset when the shard
 * is READY or RESUMED again) and stop for good once the channel stops.
 */
import type * as DiscordSdk from "discord.js";
import type { WebSocketOptions } from "discord.js";
import type { ChannelClock } from "../clock.js";

const MAX_DELAY_MS = 60_000;

/** The wait before connection attempt `failures + 1` (the first retry goes at once). */
export function reconnectDelayMs(failures: number): number {
  return failures === 0 ? 0 : Math.min(1000 * 2 ** (failures - 1), MAX_DELAY_MS);
}

/** The parts of @discordjs/ws's WebSocketShard the supervisor touches (not in its public types). */
interface ShardInternals {
  internalConnect(): Promise<void>;
  on(event: string, listener: () => void): unknown;
}

type Sdk = typeof DiscordSdk;
/** @discordjs/ws's manager, as discord.js hands it to `buildStrategy`. */
type WebSocketManager = Parameters<NonNullable<WebSocketOptions["buildStrategy"]>>[0];

export class GatewaySupervisor {
  private stopped = false;
  private readonly waits = new Set<() => void>();

  constructor(private readonly clock: ChannelClock) {}

  /** For `new Client({ ws: { buildStrategy } })`. */
  buildStrategy(sdk: Sdk): (manager: WebSocketManager) => InstanceType<Sdk["SimpleShardingStrategy"]> {
    return (manager) => {
      const strategy = new sdk.SimpleShardingStrategy(manager);
      const spawn = strategy.spawn.bind(strategy);
      strategy.spawn = async (shardIds) => {
        await spawn(shardIds);
        const shards = (strategy as unknown as { shards: Map<number, ShardInternals> }).shards;
        for (const shard of shards.values()) this.wrap(shard);
      };
      return strategy;
    };
  }

  /** No further connection attempts; a pending wait ends without connecting. */
  stop(): void {
    this.stopped = true;
    for (const wake of [...this.waits]) wake();
    this.waits.clear();
  }

  private wrap(shard: ShardInternals): void {
    const connect = shard.internalConnect.bind(shard);
    let failures = 0;
    const reset = (): void => {
      failures = 0;
    };
    shard.on("ready", reset);
    shard.on("resumed", reset);
    shard.internalConnect = async () => {
      if (this.stopped) return;
      await this.sleep(reconnectDelayMs(failures++));
      if (this.stopped) return;
      return connect();
    };
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = (): void => {
        cancel();
        this.waits.delete(wake);
        resolve();
      };
      const cancel = this.clock.setTimer(wake, ms);
      this.waits.add(wake);
    });
  }
}
