/**
 * Platform delivery ids seen by any worker sharing the PostgreSQL store. A platform retries a
 * webhook it thinks was lost (Slack after 3 s, then after a minute and five), and behind a load
 * balancer the retry can reach another worker: the first worker to insert the id answers it,
 * every later delivery of the same id is dropped. Ids are kept a day (far longer than any
 * platform retries) and pruned in passing.
 */
import type { Queryable } from "./pg-db.js";

/** How long a delivery id is remembered. */
export const DELIVERY_KEEP_MS = 24 * 60 * 60 * 1000;
/** Old ids are deleted at most this often (by whichever claim comes first after it). */
const PRUNE_EVERY_MS = 10 * 60 * 1000;

export class PgDeliveries {
  private lastPrune = 0;

  constructor(private readonly now: () => number) {}

  /** True when this call recorded `key` first, cluster-wide; false for a delivery already seen. */
  async claim(db: Queryable, key: string): Promise<boolean> {
    const now = this.now();
    if (now - this.lastPrune >= PRUNE_EVERY_MS) {
      this.lastPrune = now;
      await db.query("DELETE FROM channel_deliveries WHERE seen_at < $1", [now - DELIVERY_KEEP_MS]);
    }
    const result = await db.query("INSERT INTO channel_deliveries (key, seen_at) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [key, now]);
    return result.rowCount === 1;
  }
}
