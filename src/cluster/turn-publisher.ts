/**
 * A process that runs turns on a shared PostgreSQL store without serving them (`nanobot agent`,
 * `nanobot serve-mcp`) still tells the gateways on that store: each finished turn goes out on the
 * cluster relay, so their `/api/events` clients and web UIs see it as they see each other's. The
 * relay connects in the background; a turn that finishes first is sent once it has, and closing
 * sends what is left.
 */
import type { TurnObservers } from "../agent/turn-observers.js";
import type { PortableSessionStore } from "../session/records.js";
import type { SessionStore } from "../session/types.js";
import { TOPIC_TURN } from "./cluster-relay.js";
import type { ClusterRelay } from "./cluster-relay.js";

export interface TurnPublisher {
  /** Publishes what is still waiting for the connection, then closes it (bounded by the relay). */
  close(): Promise<void>;
}

/** Undefined when the store relays nothing (SQLite: one process serves it). */
export function publishTurns(store: PortableSessionStore, observers: TurnObservers): TurnPublisher | undefined {
  const relay: ClusterRelay | undefined = (store as SessionStore).eventRelay?.();
  if (!relay) return undefined;
  const started = relay.start();
  // Sent in the order the turns finished: each waits for the same connection attempt.
  const unsubscribe = observers.subscribe((event) => void started.then(() => relay.publish(TOPIC_TURN, event), () => undefined));
  return {
    async close() {
      unsubscribe();
      await started.catch(() => undefined);
      await relay.close();
    },
  };
}
