/**
 * Leader election among workers sharing one PostgreSQL: the leader is the worker holding a
 * session-level advisory lock on its own connection (pg-lock-connection.ts). The others try for
 * the lock every `retryMs`; when the leader dies its connection ends, the lock is free, and the
 * next try elects another worker. A leader whose connection breaks steps down at once (its term
 * signal aborts) before anyone else can be elected on the server side.
 */
import type { Logger } from "../core/logger.js";
import { silentLogger } from "../core/logger.js";
import { errorMessage } from "../core/errors.js";
import { LockConnection } from "./pg-lock-connection.js";
import type { Leadership, Singletons } from "./types.js";

export interface PgLeadershipOptions {
  url: string;
  /** The lock's name: the singleton group and the store's schema. */
  lockName: string;
  /** Time between a follower's tries (default 2 s). */
  retryMs?: number;
  heartbeatMs?: number;
  logger?: Logger;
}

export class PgLeadership implements Leadership {
  private connection: LockConnection | undefined;
  private term: AbortController | undefined;
  private stopped = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly log: Logger;

  constructor(private readonly options: PgLeadershipOptions) {
    this.log = options.logger ?? silentLogger;
  }

  get leading(): boolean {
    return this.term !== undefined && !this.term.signal.aborted;
  }

  /**
   * Campaigns until `stop()`: the singletons start at each term this worker wins and stop when
   * it ends. Resolves after the first try (won or not, and once a won term's start finished).
   */
  async start(singletons: Singletons): Promise<void> {
    let first!: () => void;
    const tried = new Promise<void>((resolve) => (first = resolve));
    this.loop ??= this.campaign(singletons, first);
    await tried;
  }

  /** Ends the term (if leading) and the campaign; another worker can then be elected. */
  async stop(): Promise<void> {
    this.stopped.abort();
    this.term?.abort();
    await this.loop;
    await this.connection?.end();
    this.connection = undefined;
  }

  private async campaign(singletons: Singletons, tried: () => void): Promise<void> {
    const { signal } = this.stopped;
    while (!signal.aborted) {
      try {
        if (!this.connection?.healthy) {
          await this.connection?.end();
          this.connection = await LockConnection.open({ url: this.options.url, heartbeatMs: this.options.heartbeatMs });
        }
        const connection = this.connection;
        if (await connection.tryLock(this.options.lockName)) {
          await this.serve(connection, singletons, tried);
          continue;
        }
      } catch (error) {
        this.log.warn("leader election: cannot reach PostgreSQL", { error: errorMessage(error) });
      }
      tried();
      await sleep(this.options.retryMs ?? 2_000, signal);
    }
    tried();
  }

  /** One term: starts the singletons, holds until the connection breaks or the campaign stops, stops them. */
  private async serve(connection: LockConnection, singletons: Singletons, started: () => void): Promise<void> {
    const term = new AbortController();
    this.term = term;
    const end = (): void => term.abort();
    connection.lost.addEventListener("abort", end, { once: true });
    this.stopped.signal.addEventListener("abort", end, { once: true });
    this.log.info("elected leader", { lock: this.options.lockName });
    try {
      await singletons.start(term.signal);
    } catch (error) {
      this.log.error("the leader's singletons failed to start", { error: errorMessage(error) });
    }
    started();
    await new Promise<void>((resolve) => (term.signal.aborted ? resolve() : term.signal.addEventListener("abort", () => resolve(), { once: true })));
    connection.lost.removeEventListener("abort", end);
    this.stopped.signal.removeEventListener("abort", end);
    this.log.info("leader term ended", { lock: this.options.lockName, connectionLost: connection.lost.aborted });
    // Stopped before the lock is let go: the next leader never overlaps a clean hand-over.
    await singletons.stop().catch((error: unknown) => this.log.error("the leader's singletons failed to stop", { error: errorMessage(error) }));
    if (connection.healthy) await connection.unlock(this.options.lockName).catch(() => connection.end());
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
