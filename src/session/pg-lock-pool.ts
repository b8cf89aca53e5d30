/**
 * The lock connections of a worker's session leases (pg-leases.ts), at most `max` open at once
 * (`store.maxLeaseConnections`). Each running turn holds one for its lease; past the cap a lease
 * waits for the next connection a finished turn gives back, in the order the waits began, and
 * never fails for it. A connection that broke is replaced for the next waiter; a few idle ones
 * are kept for the next lease.
 */
import { AbortedError } from "../core/errors.js";
import { LockConnection } from "./pg-lock-connection.js";

/** Idle lock connections kept for the next lease. */
const KEEP_IDLE = 4;

/**
 * Lease connections per worker when `store.maxLeaseConnections` is not set: three workers, each
 * with this many plus its pool (10), leadership, liveness and relay connections, fit in a default
 * PostgreSQL (100 connections, 3 kept for superusers).
 */
export const DEFAULT_MAX_LEASE_CONNECTIONS = 16;

export interface LockPoolOptions {
  url: string;
  max: number;
  heartbeatMs?: number;
}

interface Waiter {
  /** A healthy connection handed on, or undefined: the slot is yours, open a new one. */
  resolve: (connection: LockConnection | undefined) => void;
  reject: (error: Error) => void;
}

export class LockConnectionPool {
  private idle: LockConnection[] = [];
  /** Connections checked out (or being opened) for leases. */
  private busy = 0;
  private readonly waiters: Waiter[] = [];
  private closed = false;

  constructor(private readonly options: LockPoolOptions) {
    if (!Number.isInteger(options.max) || options.max < 1) throw new Error(`maxLeaseConnections must be a positive integer, got ${String(options.max)}`);
  }

  /** Connections in use by leases now (for tests and diagnostics). */
  get inUse(): number {
    return this.busy;
  }

  /** Leases waiting for a connection because the cap is reached. */
  get queued(): number {
    return this.waiters.length;
  }

  /** A connection for one lease: an idle one, a new one under the cap, or the next one given back. */
  async take(signal?: AbortSignal): Promise<LockConnection> {
    if (this.closed) throw new Error("the session store is closed");
    signal?.throwIfAborted();
    let handed: LockConnection | undefined;
    if (this.busy < this.options.max) {
      this.busy++;
      handed = this.popIdle();
    } else {
      handed = await this.wait(signal);
    }
    if (handed) return handed;
    try {
      return await LockConnection.open({ url: this.options.url, heartbeatMs: this.options.heartbeatMs });
    } catch (error) {
      this.give(undefined);
      throw error;
    }
  }

  /** Gives a connection back (broken ones are ended): the next waiter gets it, or it idles. */
  give(connection: LockConnection | undefined): void {
    const usable = connection?.healthy && !this.closed ? connection : undefined;
    if (connection && !usable) void connection.end();
    const next = this.waiters.shift();
    if (next) {
      next.resolve(usable);
      return;
    }
    this.busy--;
    if (!usable) return;
    if (this.idle.length < KEEP_IDLE) this.idle.push(usable);
    else void usable.end();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter.reject(new Error("the session store is closed"));
    const idle = this.idle.splice(0);
    await Promise.all(idle.map((c) => c.end()));
  }

  private popIdle(): LockConnection | undefined {
    for (let c = this.idle.pop(); c; c = this.idle.pop()) {
      if (c.healthy) return c;
      void c.end();
    }
    return undefined;
  }

  private wait(signal: AbortSignal | undefined): Promise<LockConnection | undefined> {
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        const at = this.waiters.indexOf(waiter);
        if (at !== -1) this.waiters.splice(at, 1);
        reject(new AbortedError("stopped while waiting for a lease connection"));
      };
      const waiter: Waiter = {
        resolve: (connection) => {
          signal?.removeEventListener("abort", onAbort);
          // Handed on while the wait was being abandoned: pass it to the next one.
          if (signal?.aborted) {
            this.give(connection);
            return;
          }
          resolve(connection);
        },
        reject: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      this.waiters.push(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
