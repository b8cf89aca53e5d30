/**
 * The cluster relay on PostgreSQL LISTEN/NOTIFY: one dedicated connection per worker listens on
 * the store's channel (`nanobot_events_<schema>`) and sends on it. NOTIFY needs no other
 * service, is delivered only after commit and in commit order, and reaches every listening
 * worker; payloads over 8000 bytes are cut into chunks sent in one statement (relay-codec.ts).
 * Every event names its sender, so a worker drops its own. When the connection drops, the relay
 * reconnects with backoff (0.2 s doubling to 5 s), listens again and calls its resync listeners:
 * NOTIFY is not stored, so whatever was sent while it was away is lost.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import type { ClusterRelay, RelayListener } from "../cluster/cluster-relay.js";
import { CHUNK_BYTES, Reassembler, decodeFrame, encodeEvent } from "../cluster/relay-codec.js";
import { errorMessage } from "../core/errors.js";
import { silentLogger } from "../core/logger.js";
import type { Logger } from "../core/logger.js";
import { validSchemaName } from "./pg-db.js";

/** `application_name` of a store's relay connections once they listen (tests and operators find them by this). */
export function relayApplicationName(namespace: string): string {
  return `nanobot-relay ${namespace}`.slice(0, 63);
}

export interface PgEventRelayOptions {
  /** Server URL (no nanobot `schema` parameter). */
  url: string;
  /** The store's schema: workers of one store share the channel, other stores do not hear it. */
  namespace: string;
  logger?: Logger;
  /** Largest event (JSON bytes) sent; bigger ones are dropped with a warning (default 1 MB). */
  maxEventBytes?: number;
  /** Chunk size (tests make it small). */
  chunkBytes?: number;
  /** Waits between reconnection attempts (default 200 ms doubling to 5 s). */
  retryDelaysMs?: readonly number[];
}

const DEFAULT_RETRY_DELAYS_MS = [200, 400, 800, 1_600, 3_200, 5_000];

/** How long closing waits for sends still on the wire. */
const CLOSE_FLUSH_MS = 2_000;

export class PgEventRelay implements ClusterRelay {
  readonly workerId = randomUUID();
  /** The NOTIFY channel (a quoted identifier). */
  readonly channel: string;
  private readonly log: Logger;
  private readonly listeners = new Map<string, Set<RelayListener>>();
  private readonly resyncListeners = new Set<() => void>();
  private readonly reassembler = new Reassembler();
  private client: pg.Client | undefined;
  private closed = false;
  private everConnected = false;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private sequence = 0;
  private started: Promise<void> | undefined;
  /** Sends go one after the other on the connection (the driver wants no overlapping queries). */
  private sending: Promise<void> = Promise.resolve();

  constructor(private readonly options: PgEventRelayOptions) {
    this.channel = `nanobot_events_${validSchemaName(options.namespace)}`;
    this.log = options.logger ?? silentLogger;
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  start(): Promise<void> {
    this.started ??= this.connect();
    return this.started;
  }

  publish(topic: string, data: unknown): void {
    const client = this.client;
    if (!client) {
      this.log.debug("cluster relay: not connected, event dropped", { topic });
      return;
    }
    const json = JSON.stringify(data);
    const max = this.options.maxEventBytes ?? 1024 * 1024;
    if (Buffer.byteLength(json) > max) {
      this.log.warn("cluster relay: event too large to relay, dropped", { topic, bytes: Buffer.byteLength(json), max });
      return;
    }
    const frames = encodeEvent(this.workerId, (++this.sequence).toString(36), topic, json, this.options.chunkBytes ?? CHUNK_BYTES);
    // One statement: the chunks commit (and arrive) together and in order.
    const calls = frames.map((_, i) => `pg_notify($1, $${i + 2})`).join(", ");
    this.sending = this.sending
      .then(() => client.query(`SELECT ${calls}`, [this.channel, ...frames]))
      .then(
        () => undefined,
        (error: unknown) => this.log.debug("cluster relay: send failed, event dropped", { topic, error: errorMessage(error) }),
      );
  }

  subscribe(topic: string, listener: RelayListener): () => void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  onResync(listener: () => void): () => void {
    this.resyncListeners.add(listener);
    return () => this.resyncListeners.delete(listener);
  }

  /** Sends what was published (a short-lived CLI process's last events), then disconnects. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    if (client) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.sending, new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_FLUSH_MS)))]);
      clearTimeout(timer);
    }
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** One connection attempt; a failure (or a later drop) schedules the next. */
  private async connect(): Promise<void> {
    if (this.closed) return;
    const driver = (await import("pg")).default;
    const client = new driver.Client({
      connectionString: this.options.url,
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: "nanobot-relay (connecting)",
    });
    let lost = false;
    const onLost = (error?: unknown): void => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = undefined;
      void client.end().catch(() => undefined);
      if (this.closed) return;
      this.reassembler.clear();
      this.log.warn("cluster relay: connection lost, reconnecting", error ? { error: errorMessage(error) } : {});
      this.schedule();
    };
    client.on("error", onLost);
    client.on("end", () => onLost());
    client.on("notification", (message) => {
      if (message.channel === this.channel && message.payload !== undefined) this.receive(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channel}"`);
      // Renamed only once it listens: a connection with this name hears every event.
      await client.query(`SET application_name = '${relayApplicationName(this.options.namespace)}'`);
    } catch (error) {
      onLost(error);
      return;
    }
    if (lost) return;
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.attempt = 0;
    if (this.everConnected) {
      this.log.info("cluster relay: reconnected; events sent during the cut were not received");
      for (const listener of this.resyncListeners) call(() => listener());
    }
    this.everConnected = true;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    const delays = this.options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    const delay = delays[Math.min(this.attempt, delays.length - 1)] ?? 1_000;
    this.attempt++;
    this.timer = setTimeout(() => void this.connect(), delay);
    this.timer.unref();
  }

  private receive(payload: string): void {
    const frame = decodeFrame(payload);
    if (!frame || frame.worker === this.workerId) return;
    const whole = this.reassembler.add(frame);
    if (!whole) return;
    const listeners = this.listeners.get(whole.topic);
    if (!listeners?.size) return;
    let data: unknown;
    try {
      data = JSON.parse(whole.json);
    } catch {
      this.log.debug("cluster relay: unreadable event dropped", { topic: whole.topic });
      return;
    }
    for (const listener of listeners) call(() => listener(data, frame.worker));
  }
}

function call(fn: () => void): void {
  try {
    fn();
  } catch {
    // A listener's failure is its own.
  }
}
