/**
 * Per-session leases across workers sharing one PostgreSQL: a turn runs only while its worker
 * holds the session's lease, so no two workers run turns of one session at once. A lease is a
 * session-level advisory lock held on a dedicated connection (pg-lock-connection.ts) for the
 * whole turn: waiters queue in the server's lock queue (arrival order), and a worker that dies
 * loses the lease with its connection — no expiry to tune, no clock to trust.
 */
import { AbortedError } from "../core/errors.js";
import { KeyedSerial } from "../core/keyed-serial.js";
import { isQueryCanceled } from "./pg-lock-connection.js";
import type { LockConnection } from "./pg-lock-connection.js";
import { DEFAULT_MAX_LEASE_CONNECTIONS, LockConnectionPool } from "./pg-lock-pool.js";
import type { SessionLease } from "./types.js";

export interface PgSessionLeasesOptions {
  url: string;
  /** The lock namespace: the store's schema, so clusters on other schemas never contend. */
  namespace: string;
  /** Cancels a lock wait running on the server process `pid` (through another connection). */
  cancel: (pid: number) => Promise<void>;
  heartbeatMs?: number;
  /** Lock connections open at once (one per running turn); past it leases wait in order (default 16). */
  maxConnections?: number;
}

export class PgSessionLeases {
  /** Sessions whose lease this process holds or waits for, queued here in order. */
  private readonly waiting = new KeyedSerial("stopped while waiting for the session lease");
  private readonly held = new Set<string>();
  private readonly connections: LockConnectionPool;
  private closed = false;

  constructor(private readonly options: PgSessionLeasesOptions) {
    this.connections = new LockConnectionPool({ url: options.url, max: options.maxConnections ?? DEFAULT_MAX_LEASE_CONNECTIONS, heartbeatMs: options.heartbeatMs });
  }

  /** Lease connections in use, and leases waiting because all of them are. */
  connectionUse(): { inUse: number; queued: number } {
    return { inUse: this.connections.inUse, queued: this.connections.queued };
  }

  /** The advisory lock name of a session's lease. */
  lockName(sessionKey: string): string {
    return `nanobot:lease:${this.options.namespace}:${sessionKey}`;
  }

  /** True while this process holds the lease of `sessionKey`. */
  holds(sessionKey: string): boolean {
    return this.held.has(sessionKey);
  }

  /**
   * Waits for the session's lease (after the holders before it, here and on other workers).
   * `signal` abandons the wait; the lease's `lost` fires if its connection breaks while held.
   */
  async acquire(sessionKey: string, signal?: AbortSignal): Promise<SessionLease> {
    if (this.closed) throw new Error("the session store is closed");
    // One waiter per session per process goes to the server; the rest queue here, in order.
    const finish = await this.waiting.acquire(sessionKey, signal);
    try {
      const connection = await this.lockOn(this.lockName(sessionKey), signal);
      this.held.add(sessionKey);
      let released = false;
      return {
        sessionKey,
        lost: connection.lost,
        release: async () => {
          if (released) return;
          released = true;
          this.held.delete(sessionKey);
          try {
            await this.unlockOn(connection, this.lockName(sessionKey));
          } finally {
            finish();
          }
        },
      };
    } catch (error) {
      finish();
      throw error;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.connections.close();
  }

  private async lockOn(name: string, signal: AbortSignal | undefined): Promise<LockConnection> {
    signal?.throwIfAborted();
    const connection = await this.connections.take(signal);
    const cancel = (): void => void this.options.cancel(connection.pid).catch(() => undefined);
    signal?.addEventListener("abort", cancel, { once: true });
    try {
      await connection.lock(name);
    } catch (error) {
      this.connections.give(connection);
      if (isQueryCanceled(error) && signal?.aborted) throw new AbortedError("stopped while waiting for the session lease");
      throw error;
    } finally {
      signal?.removeEventListener("abort", cancel);
    }
    if (signal?.aborted) {
      // Granted just as the wait was abandoned: hand it on.
      await this.unlockOn(connection, name);
      throw new AbortedError("stopped while waiting for the session lease");
    }
    return connection;
  }

  private async unlockOn(connection: LockConnection, name: string): Promise<void> {
    if (connection.healthy) {
      try {
        await connection.unlock(name);
      } catch {
        // Ending the connection releases whatever it still holds.
        await connection.end();
      }
    }
    // A broken one is ended and replaced for the next lease waiting at the cap.
    this.connections.give(connection);
  }
}

