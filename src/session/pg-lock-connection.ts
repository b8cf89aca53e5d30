/**
 * A dedicated PostgreSQL connection that holds session-level advisory locks: the cluster's
 * leases (pg-leases.ts) and leadership (pg-leader.ts). A lock lives exactly as long as the
 * connection that took it, so a worker that dies (even by SIGKILL) loses its locks as soon as
 * the server sees its socket close — or, for a machine that vanished, when the server's TCP
 * keepalives give up (about 25 s, set per connection below). A heartbeat on the connection
 * tells the holder when its side broke, so it stops acting on a lock it may no longer hold.
 */
import type pg from "pg";

const QUERY_CANCELED = "57014";

export interface LockConnectionOptions {
  url: string;
  /** Heartbeat period (default 5 s). */
  heartbeatMs?: number;
}

/** The advisory lock key of a name: the same 64-bit hash on every worker. */
export const LOCK_KEY_SQL = "hashtextextended($1, 0)";

export class LockConnection {
  /** Aborted when the connection broke: every lock it held is gone. */
  readonly lost: AbortSignal;
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private ended = false;

  private constructor(
    private readonly client: pg.Client,
    /** The server process of this connection (for `pg_cancel_backend`). */
    readonly pid: number,
    heartbeatMs: number,
  ) {
    this.lost = this.abort.signal;
    client.on("error", () => this.markLost());
    client.on("end", () => this.markLost());
    this.timer = setInterval(() => void this.beat(), heartbeatMs);
    this.timer.unref();
  }

  static async open(options: LockConnectionOptions): Promise<LockConnection> {
    const driver = (await import("pg")).default;
    const client = new driver.Client({
      connectionString: options.url,
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      // The server drops a vanished peer's connection (and its locks) within ~25 s, and notices
      // a client gone while this connection waits for a lock.
      options: "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3 -c client_connection_check_interval=2000",
    });
    await client.connect();
    try {
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      return new LockConnection(client, rows[0]!.pid, options.heartbeatMs ?? 5_000);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  get healthy(): boolean {
    return !this.ended && !this.lost.aborted;
  }

  /** Waits for the lock of `name` (waiters are granted in arrival order). */
  async lock(name: string): Promise<void> {
    await this.client.query(`SELECT pg_advisory_lock(${LOCK_KEY_SQL})`, [name]);
  }

  /** Takes the lock of `name` when it is free; false when another connection holds it. */
  async tryLock(name: string): Promise<boolean> {
    const { rows } = await this.client.query<{ ok: boolean }>(`SELECT pg_try_advisory_lock(${LOCK_KEY_SQL}) AS ok`, [name]);
    return rows[0]?.ok === true;
  }

  async unlock(name: string): Promise<void> {
    await this.client.query(`SELECT pg_advisory_unlock(${LOCK_KEY_SQL})`, [name]);
  }

  async end(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.timer);
    await this.client.end().catch(() => undefined);
  }

  private async beat(): Promise<void> {
    if (!this.healthy) return;
    try {
      await this.client.query("SELECT 1");
    } catch (error) {
      // A cancel meant for an earlier lock wait may land on the heartbeat: the connection is fine.
      if ((error as { code?: unknown }).code !== QUERY_CANCELED) this.markLost();
    }
  }

  private markLost(): void {
    clearInterval(this.timer);
    if (!this.lost.aborted) this.abort.abort(new Error("the lock connection to PostgreSQL broke"));
    if (!this.ended) {
      this.ended = true;
      void this.client.end().catch(() => undefined);
    }
  }
}

export function isQueryCanceled(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === QUERY_CANCELED;
}
