/**
 * The channel contract. A channel connects one chat platform to the bus: it turns platform
 * updates into `InboundMessage`s (through the `InboundGate`, which applies access control) and
 * delivers the `OutboundMessage`s the manager routes to it.
 */
import type { ClusterRelay } from "../cluster/cluster-relay.js";
import type { MessageBus, OutboundMessage } from "../bus/types.js";
import type { Logger } from "../core/logger.js";
import type { InboundGate } from "./access/inbound-gate.js";
import type { ChannelClock } from "./clock.js";
import type { DeliveryQueue } from "./delivery/delivery-queue.js";
import type { InboundDedup } from "./delivery/inbound-dedup.js";

/**
 * A chat platform adapter. `send` receives every outbound kind addressed to this channel
 * (message, delta, stream_end, progress, typing); it must be idempotent on `message.id`.
 */
export interface Channel {
  /** The config key (`channels.<name>`) and the `channel` field of its messages. */
  readonly name: string;
  /**
   * Connects to the platform. Resolves once the channel is receiving (polling started, socket
   * listening); rejects when it cannot start. `signal` aborts a slow start.
   */
  start(signal: AbortSignal): Promise<void>;
  /** Stops receiving and releases resources. Safe to call twice or before `start`. */
  stop(): Promise<void>;
  /** Delivers one outbound message. Failures after retries reject (the bus reports them). */
  send(message: OutboundMessage): Promise<void>;
  /**
   * The platform connection as the channel sees it now; channels without a lasting connection
   * (webhooks, polling) may leave it out and count as connected while started.
   */
  status?(): ChannelConnection;
}

/** What `nanobot channels list` shows for a running channel. */
export interface ChannelConnection {
  connected: boolean;
  /** The last connection problem, kept after a recovery. */
  lastError?: string;
}

/** Senders the platform identifies: the id always, a `@username` where the platform has one. */
export interface SenderIdentity {
  id: string;
  username?: string;
}

/** Channel names used by the agent layer for messages that originate inside the process. */
export const INTERNAL_CHANNELS: ReadonlySet<string> = new Set(["system", "cron", "subagent", "heartbeat"]);

export function isInternalChannel(name: string): boolean {
  return INTERNAL_CHANNELS.has(name.trim().toLowerCase());
}

/** What the manager hands every channel it builds. */
export interface ChannelDeps {
  bus: MessageBus;
  /** Access control + publish for this channel's inbound messages. */
  gate: InboundGate;
  /** Shared by all channels: retries and delivery-id idempotency. */
  delivery: DeliveryQueue;
  /** `$NANOBOT_HOME`; downloaded media go under `<home>/media/<channel>/`. */
  home: string;
  logger: Logger;
  clock: ChannelClock;
  /** The cluster relay, on a gateway worker sharing a PostgreSQL store (channels that run on every worker use it). */
  relay?: ClusterRelay;
  /** Drops a platform's repeated webhook deliveries (shared by the workers of a cluster); a memory of its own when absent. */
  dedup?: InboundDedup;
}
