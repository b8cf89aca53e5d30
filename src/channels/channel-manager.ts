/**
 * Builds the enabled channels from `channels.<name>`, starts them side by side and routes each
 * one its outbound messages. A channel that fails to build or start is reported and left out;
 * the others run. A cluster's worker starts its channels in two parts (placement.ts): the
 * webhook channels every worker serves, and the rest for the leader's term.
 */
import type { Server } from "node:http";
import type { MessageBus, OutboundMessage } from "../bus/types.js";
import type { ClusterRelay } from "../cluster/cluster-relay.js";
import { errorMessage } from "../core/errors.js";
import { silentLogger } from "../core/logger.js";
import type { Logger } from "../core/logger.js";
import { AccessControl } from "./access/access-control.js";
import { InboundGate } from "./access/inbound-gate.js";
import { PairingStore, pairingStorePath } from "./access/pairing-store.js";
import type { SharedChannelSettings } from "./channel-config.js";
import { systemClock } from "./clock.js";
import type { ChannelClock } from "./clock.js";
import { DeliveryQueue } from "./delivery/delivery-queue.js";
import type { Sleep } from "./delivery/delivery-queue.js";
import type { InboundDedup } from "./delivery/inbound-dedup.js";
import { channelPlacement } from "./placement.js";
import type { ChannelPlacement } from "./placement.js";
import { isInternalChannel } from "./types.js";
import type { Channel, ChannelDeps } from "./types.js";

export interface ChannelFactoryInput {
  name: string;
  /** The whole `channels.<name>` object, for the channel's own schema to parse. */
  raw: Record<string, unknown>;
  shared: SharedChannelSettings;
  deps: ChannelDeps;
  /** The gateway's HTTP server, for channels that share it (WebSocket). */
  httpServer?: Server;
  /** The pairing store, for channels that build a gate of their own (Mattermost's DM policy). */
  /** The pairing store, for channels that build their own gates (Signal's DM and group policies). */
  pairing?: PairingStore;
}

/** Builds a channel; may load its modules first (see factories.ts). */
export type ChannelFactory = (input: ChannelFactoryInput) => Channel | Promise<Channel>;

export interface ChannelManagerOptions {
  bus: MessageBus;
  /** `config.channels` as loaded. */
  channels: Record<string, unknown>;
  home: string;
  /** Channel type → factory; the type is `channels.<name>.type`, else the name itself. */
  factories: Record<string, ChannelFactory>;
  pairing?: PairingStore;
  delivery?: DeliveryQueue;
  /** How the built delivery queue waits between retries (tests record the waits). */
  sleep?: Sleep;
  clock?: ChannelClock;
  logger?: Logger;
  httpServer?: Server;
  /** The cluster relay (gateway workers sharing a PostgreSQL store), handed to the channels. */
  relay?: ClusterRelay;
  /** Recognises repeated webhook deliveries; shared through the store on a cluster. */
  dedup?: InboundDedup;
}

/** One configured channel as `nanobot channels list` shows it. */
export interface ChannelListEntry {
  name: string;
  type: string;
  enabled: boolean;
  /** Null when nobody knows (read from the config, no gateway running). */
  connected: boolean | null;
  lastError?: string;
}

export interface ChannelStartResult {
  name: string;
  ok: boolean;
  error?: string;
}

interface Running {
  channel: Channel;
  unsubscribe: () => void;
  placement: ChannelPlacement;
}

/** Which channels a start or stop covers: all of them, or those of one placement. */
export type ChannelSelection = ChannelPlacement | "all";

export class ChannelManager {
  readonly pairing: PairingStore;
  readonly delivery: DeliveryQueue;
  private readonly options: ChannelManagerOptions;
  private readonly logger: Logger;
  private readonly running = new Map<string, Running>();
  private readonly startErrors = new Map<string, string>();

  constructor(options: ChannelManagerOptions) {
    this.options = options;
    this.logger = options.logger ?? silentLogger;
    this.pairing = options.pairing ?? new PairingStore({ path: pairingStorePath(options.home) });
    const maxRetries = options.channels.sendMaxRetries;
    this.delivery =
      options.delivery ??
      new DeliveryQueue({
        logger: this.logger,
        ...(options.sleep ? { sleep: options.sleep } : {}),
        ...(typeof maxRetries === "number" ? { retryDelaysMs: retryDelaysFor(maxRetries) } : {}),
      });
  }

  /** Starts every enabled channel of `which` concurrently; one result per channel started. */
  async startAll(signal: AbortSignal = new AbortController().signal, which: ChannelSelection = "all"): Promise<ChannelStartResult[]> {
    const enabled = Object.entries(this.options.channels).filter(
      (entry): entry is [string, Record<string, unknown>] => isRecord(entry[1]) && entry[1].enabled === true,
    );
    const chosen = enabled.filter(([name, raw]) => which === "all" || placementOf(raw, name) === which);
    return Promise.all(chosen.map(([name, raw]) => this.startOne(name, raw, signal)));
  }

  /** Stops the running channels of `which`. */
  async stopAll(which: ChannelSelection = "all"): Promise<void> {
    const all = [...this.running.entries()].filter(([, running]) => which === "all" || running.placement === which);
    for (const [name] of all) this.running.delete(name);
    await Promise.all(
      all.map(async ([name, { channel, unsubscribe }]) => {
        unsubscribe();
        try {
          await channel.stop();
        } catch (error) {
          this.logger.warn("channel stop failed", { channel: name, error: errorMessage(error) });
        }
      }),
    );
  }

  get(name: string): Channel | undefined {
    return this.running.get(name)?.channel;
  }

  /** Every channel entry of the config, with what the running channels say about their connection. */
  list(): ChannelListEntry[] {
    return configuredChannels(this.options.channels).map((entry) => {
      if (!entry.enabled) return { ...entry, connected: false };
      const channel = this.running.get(entry.name)?.channel;
      const startError = this.startErrors.get(entry.name);
      if (!channel) return { ...entry, connected: false, ...(startError ? { lastError: startError } : {}) };
      const state = channel.status?.() ?? { connected: true };
      return { ...entry, connected: state.connected, ...(state.lastError ? { lastError: state.lastError } : {}) };
    });
  }

  /** Names of the channels that started. */
  names(): string[] {
    return [...this.running.keys()];
  }

  private async startOne(name: string, raw: Record<string, unknown>, signal: AbortSignal): Promise<ChannelStartResult> {
    let channel: Channel | undefined;
    try {
      if (isInternalChannel(name)) throw new Error(`"${name}" is reserved for internal messages`);
      const type = typeOf(name, raw);
      const factory = this.options.factories[type];
      if (!factory) throw new Error(`unknown channel type "${type}"`);
      const shared: SharedChannelSettings = {
        enabled: true,
        allowFrom: Array.isArray(raw.allowFrom) ? raw.allowFrom.map(String) : [],
      };
      if (typeof raw.streaming === "boolean") shared.streaming = raw.streaming;
      const logger = this.logger.child({ channel: name });
      const access = new AccessControl({ channel: name, allowFrom: shared.allowFrom, store: this.pairing });
      const deps: ChannelDeps = {
        bus: this.options.bus,
        gate: new InboundGate({ bus: this.options.bus, access, logger }),
        delivery: this.delivery,
        home: this.options.home,
        logger,
        clock: this.options.clock ?? systemClock,
        ...(this.options.relay ? { relay: this.options.relay } : {}),
        ...(this.options.dedup ? { dedup: this.options.dedup } : {}),
      };
      const { settings, admits } = progressSwitches(type, raw, this.options.channels);
      channel = await factory({ name, raw: settings, shared, deps, httpServer: this.options.httpServer, pairing: this.pairing });
      await channel.start(signal);
      const started = channel;
      const unsubscribe = this.options.bus.subscribeOutbound((message) => (admits(message) ? started.send(message) : undefined), { channel: name });
      this.running.set(name, { channel: started, unsubscribe, placement: placementOf(raw, name) });
      this.startErrors.delete(name);
      this.logger.info("channel started", { channel: name });
      return { name, ok: true };
    } catch (error) {
      this.logger.error("channel failed to start", { channel: name, error: errorMessage(error) });
      this.startErrors.set(name, errorMessage(error));
      // Release whatever a half-started channel holds (sockets, timers).
      await channel?.stop().catch(() => undefined);
      return { name, ok: false, error: errorMessage(error) };
    }
  }
}

/** Channel types that keep their own progress defaults whatever `channels.*` says (as in the Python nanobot). */
const OWN_PROGRESS_DEFAULTS = new Set(["weixin"]);

const flag = (value: unknown): boolean | undefined => (typeof value === "boolean" ? value : undefined);

/**
 * The Python nanobot's `sendProgress` / `sendToolHints`, per channel else under `channels`:
 * `sendProgress` lets through the model's text before its tool calls, `sendToolHints` the tool
 * hints, each on its own. With neither set anywhere the channel's own `sendProgress` default
 * decides both (nanobot's default: off). The channel gets `sendProgress` on when either passes;
 * `admits` filters what it may not show.
 */
export function progressSwitches(
  type: string,
  raw: Record<string, unknown>,
  channels: Record<string, unknown>,
): { settings: Record<string, unknown>; admits: (message: OutboundMessage) => boolean } {
  const own = OWN_PROGRESS_DEFAULTS.has(type);
  const progress = flag(raw.sendProgress) ?? (own ? undefined : flag(channels.sendProgress));
  const hints = flag(raw.sendToolHints) ?? (own ? undefined : flag(channels.sendToolHints)) ?? true;
  const settings = progress !== undefined && raw.sendProgress === undefined ? { ...raw, sendProgress: progress } : { ...raw };
  if (progress !== undefined && !own) settings.sendProgress = progress || hints;
  const admits = (message: OutboundMessage): boolean => {
    if (message.kind !== "progress") return true;
    if (message.toolName !== undefined) return hints;
    return progress ?? true;
  };
  return { settings, admits };
}

/** The channel entries under `channels` (not the switches beside them), as the config has them. */
export function configuredChannels(channels: Record<string, unknown>): Array<Omit<ChannelListEntry, "connected">> {
  return Object.entries(channels)
    .filter((entry): entry is [string, Record<string, unknown>] => isRecord(entry[1]))
    .map(([name, raw]) => ({ name, type: typeof raw.type === "string" ? raw.type : name, enabled: raw.enabled === true }));
}

function typeOf(name: string, raw: unknown): string {
  return isRecord(raw) && typeof raw.type === "string" ? raw.type : name;
}

function placementOf(raw: Record<string, unknown>, name: string): ChannelPlacement {
  return channelPlacement(typeOf(name, raw), raw);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * `channels.sendMaxRetries` (the Python nanobot's key): delivery attempts, the first included,
 * so 3 means two retries. The waits double from 1 s.
 */
export function retryDelaysFor(maxAttempts: number): number[] {
  const attempts = Math.min(Math.max(Math.trunc(maxAttempts), 1), 10);
  return Array.from({ length: attempts - 1 }, (_, i) => 1000 * 2 ** i);
}
