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
  /** The shard's current `ws` socket. */
  connection?: unknown;
}

interface Emitter {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}

const ignore = (): void => undefined;

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
    guardConnections(shard);
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

/**
 * A shard destroyed while its socket is still opening drops the socket's error handler
 * (`onerror = null`; only an open socket is closed), so the server's answer to that handshake —
 * a refusal, a reset — is an `error` event nobody listens to, and `ws` throws it out of the
 * process. Every socket the shard opens gets a listener of its own, which the shard's handler
 * runs beside while it lasts.
 */
function guardConnections(shard: ShardInternals): void {
  let current = shard.connection;
  Object.defineProperty(shard, "connection", {
    configurable: true,
    enumerable: true,
    get: () => current,
    set: (socket: unknown) => {
      current = socket;
      if (socket && typeof (socket as Emitter).on === "function") (socket as Emitter).on("error", ignore);
    },
  });
}
