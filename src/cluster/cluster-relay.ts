/**
 * Events between the gateway workers that share one PostgreSQL store: a turn's completion for
 * `/api/events` and the web UI, a WebSocket-channel message for the worker holding the
 * client's socket. Delivery is at most once and best effort: a worker whose relay connection
 * is down misses what is sent meanwhile, and is told so (`onResync`) when it is back.
 */
export type RelayListener = (data: unknown, from: string) => void;

export interface ClusterRelay {
  /** This worker's id on the relay (other workers' events carry theirs). */
  readonly workerId: string;
  /** Connects (resolves after the first try; a failed one keeps retrying in the background). */
  start(): Promise<void>;
  /** Sends `data` (JSON) to every other worker listening on `topic`; never to this one. */
  publish(topic: string, data: unknown): void;
  subscribe(topic: string, listener: RelayListener): () => void;
  /** Called when the relay reconnected after a cut: events sent during the cut were lost. */
  onResync(listener: () => void): () => void;
  readonly connected: boolean;
  close(): Promise<void>;
}

/** Relay topics (plain tokens, see relay-codec.ts). */
export const TOPIC_TURN = "turn";
export const TOPIC_CHANNEL = "channel";
