/**
 * Where a thread's replayed rows are (`[id, seq]`, see ParsedMessages), kept between turns so a
 * history replay reads from the database only the places it has not seen. Every turn replays
 * nearly the same rows, and reading their places is most of what a replay costs once the
 * messages themselves are parsed (~1 µs a row: 0.1 ms a turn at 100 messages).
 *
 * The cache is right only while it hears of every change to `messages`:
 * - this connection's changes reach it through temporary triggers (per connection, invisible to
 *   other processes): an insert after a thread's last row extends its places; any other insert,
 *   delete or move (including `ON DELETE CASCADE`) forgets the thread;
 * - a rolled-back transaction may have extended places with rows that never committed: it
 *   clears everything (`onRollback`);
 * - another connection's commits (another process, another store on the same file) change
 *   `PRAGMA data_version`, checked inside each read transaction: any change clears everything.
 */
import type Database from "better-sqlite3";
import type { RowPlace } from "./parsed-messages.js";
import { onRollback } from "./sqlite-db.js";

/** Newest first, up to `limit`, below `beforeSeq` and at or after `fromSeq`. */
export type PlacesQuery = (threadId: string, fromSeq: number, beforeSeq: number, limit: number) => RowPlace[];

interface Entry {
  /** The replay start the places were read for (a consolidation moves it: the entry is dropped). */
  fromSeq: number;
  /** Ascending by seq; together they are every row from the first one's seq to the end of the thread. */
  places: RowPlace[];
  /** Whether `places` reaches back to `fromSeq` (no row between `fromSeq` and the first place). */
  complete: boolean;
}

/**
 * Places kept at most, then cleared wholesale like ParsedMessages: ~100 bytes of heap each
 * (measured on Node 20), so ~5 MB; the replay windows (120 messages by default) of ~400 sessions.
 */
export const DEFAULT_MAX_PLACES = 50_000;

export class ThreadPlaces {
  private readonly threads = new Map<string, Entry>();
  private count = 0;
  /** `PRAGMA data_version` when the entries were last known to be whole. */
  private version: number | undefined;
  private readonly dataVersion: Database.Statement<[], number>;

  constructor(
    db: Database.Database,
    private readonly query: PlacesQuery,
    private readonly maxPlaces = DEFAULT_MAX_PLACES,
  ) {
    this.dataVersion = db.prepare<[], number>("PRAGMA data_version").pluck();
    db.function("nanobot_message_added", { deterministic: false }, (threadId, id, seq) => {
      this.added(threadId as string, id as string, seq as number);
      return null;
    });
    db.function("nanobot_messages_changed", { deterministic: false }, (threadId) => {
      this.forget(threadId as string);
      return null;
    });
    db.exec(`
      CREATE TEMP TRIGGER IF NOT EXISTS nanobot_places_insert AFTER INSERT ON main.messages
        BEGIN SELECT nanobot_message_added(NEW.thread_id, NEW.id, NEW.seq); END;
      CREATE TEMP TRIGGER IF NOT EXISTS nanobot_places_delete AFTER DELETE ON main.messages
        BEGIN SELECT nanobot_messages_changed(OLD.thread_id); END;
      CREATE TEMP TRIGGER IF NOT EXISTS nanobot_places_update AFTER UPDATE OF id, thread_id, seq ON main.messages
        BEGIN SELECT nanobot_messages_changed(OLD.thread_id); SELECT nanobot_messages_changed(NEW.thread_id); END;
    `);
    onRollback(db, () => this.clear());
  }

  /** Inside a read transaction, before `page`: forgets everything if another connection wrote. */
  validate(): void {
    const version = this.dataVersion.get();
    if (version !== this.version) {
      this.clear();
      this.version = version;
    }
  }

  /**
   * Up to `limit` places of the thread's rows below `beforeSeq` and at or after `fromSeq`, newest
   * first, as `query` would return them; from the cache where it covers them.
   */
  page(threadId: string, fromSeq: number, beforeSeq: number, limit: number): RowPlace[] {
    let entry = this.threads.get(threadId);
    if (entry && entry.fromSeq !== fromSeq) {
      this.forget(threadId);
      entry = undefined;
    }
    if (!entry) {
      const rows = this.query(threadId, fromSeq, beforeSeq, limit);
      // Only a page that starts at the end of the thread can begin an entry.
      if (beforeSeq === Number.MAX_SAFE_INTEGER) this.remember(threadId, { fromSeq, places: rows.slice().reverse(), complete: rows.length < limit });
      return rows;
    }
    const { places } = entry;
    const out: RowPlace[] = [];
    for (let i = lastBelow(places, beforeSeq); i >= 0 && out.length < limit; i--) out.push(places[i]!);
    if (out.length === limit || entry.complete) return out;
    // The cache ends before the page does (an incomplete entry has places): read older rows,
    // and keep them when they join the cached ones.
    const first = places[0]![1];
    const below = Math.min(beforeSeq, first);
    const want = limit - out.length;
    const older = this.query(threadId, fromSeq, below, want);
    for (let k = 0; k < older.length; k++) out.push(older[k]!);
    if (below === first) {
      places.unshift(...older.reverse()); // `out` took them already, newest first
      this.count += older.length;
      if (older.length < want) entry.complete = true;
      this.bound();
    }
    return out;
  }

  clear(): void {
    this.threads.clear();
    this.count = 0;
  }

  private remember(threadId: string, entry: Entry): void {
    this.threads.set(threadId, entry);
    this.count += entry.places.length;
    this.bound();
  }

  private bound(): void {
    if (this.count > this.maxPlaces) this.clear();
  }

  private added(threadId: string, id: string, seq: number): void {
    const entry = this.threads.get(threadId);
    if (!entry) return;
    const last = entry.places.at(-1);
    if (seq >= entry.fromSeq && (last === undefined || seq > last[1])) {
      entry.places.push([id, seq]);
      this.count++;
      this.bound();
    } else {
      this.forget(threadId);
    }
  }

  private forget(threadId: string): void {
    const entry = this.threads.get(threadId);
    if (!entry) return;
    this.count -= entry.places.length;
    this.threads.delete(threadId);
  }
}

/** The index of the last place (ascending) whose seq is below `seq`, or -1. */
function lastBelow(places: readonly RowPlace[], seq: number): number {
  let lo = 0;
  let hi = places.length;
  if (hi > 0 && places[hi - 1]![1] < seq) return hi - 1; // most pages start at the end
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (places[mid]![1] < seq) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
