/**
 * A gateway worker's liveness id on a PostgreSQL store: an advisory lock held on a dedicated
 * connection for as long as the process lives. Idempotency-Key records name the worker running
 * a request; another worker asks whether that id is still alive (its lock still held) before it
 * resumes the request.
 */
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { pgWriteTransaction } from "./pg-db.js";
import { LOCK_KEY_SQL, LockConnection } from "./pg-lock-connection.js";

export interface PgWorkerIdOptions {
  /** The server URL (no search path needed for locks). */
  url: string;
  /** The store's schema, so several stores on one server keep their workers apart. */
  namespace: string;
  /** The store's pool, migrated, for asking about other workers. */
  pool: () => Promise<pg.Pool>;
}

export class PgWorkerId {
  private worker: Promise<{ id: string; connection: LockConnection }> | undefined;

  constructor(private readonly options: PgWorkerIdOptions) {}

  /**
   * This worker's id, alive while its lock is held. When that lock's connection broke (a network
   * cut, a database restart) the worker takes a new id: the old one is dead for everyone, so
   * requests recorded under it can be resumed by any worker.
   */
  async id(): Promise<string> {
    const seen = this.worker;
    const current = await seen?.catch(() => undefined);
    if (current?.connection.healthy) return current.id;
    // Broken, failed or never taken: one caller registers anew, the others wait for it.
    if (this.worker === seen) this.worker = this.register();
    return (await this.worker!).id;
  }

  /** A worker is alive while its lock connection holds its lock. */
  async alive(id: string): Promise<boolean> {
    const own = await this.worker?.catch(() => undefined);
    if (own?.id === id) return own.connection.healthy;
    return pgWriteTransaction(await this.options.pool(), async (client) => {
      const { rows } = await client.query<{ free: boolean }>(`SELECT pg_try_advisory_xact_lock(${LOCK_KEY_SQL}) AS free`, [this.lockName(id)]);
      return rows[0]?.free !== true;
    });
  }

  async close(): Promise<void> {
    await (await this.worker?.catch(() => undefined))?.connection.end();
  }

  private async register(): Promise<{ id: string; connection: LockConnection }> {
    const id = randomUUID();
    const connection = await LockConnection.open({ url: this.options.url });
    try {
      await connection.lock(this.lockName(id));
    } catch (error) {
      await connection.end();
      throw error;
    }
    return { id, connection };
  }

  private lockName(id: string): string {
    return `nanobot:worker:${this.options.namespace}:${id}`;
  }
}
