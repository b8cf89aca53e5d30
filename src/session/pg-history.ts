/**
 * A thread's history replayed from PostgreSQL, as the SQLite store replays it: the window's
 * places (`[id, seq]`) first, then whole rows only for messages not parsed before. Rows are never
 * updated and the places are read on every replay, so other workers' inserts and deletes show;
 * the parsed messages (ParsedMessages) come back as the same frozen objects turn after turn,
 * which also keeps the token estimator's per-message counts warm. A steady turn thus reads its
 * window's ids and the last turn's rows, not the whole window.
 */
import type { Message } from "../core/index.js";
import { BudgetTrimmer, roughTokenEstimate } from "./history.js";
import { ParsedMessages } from "./parsed-messages.js";
import type { RowPlace } from "./parsed-messages.js";
import type { PgQueries } from "./pg-queries.js";
import { rowToMessage } from "./rows.js";
import type { MessageRow } from "./rows.js";
import type { ThreadRow } from "./sqlite-queries.js";
import { SessionStoreError } from "./types.js";
import type { LoadHistoryOptions } from "./types.js";

/** Places (and at most whole rows) read per round trip when a budgeted load walks back from the newest message. */
const HISTORY_PAGE = 64;
/** The most places a first read takes when the caller expects more than a page (`expectedMessages`). */
const MAX_FIRST_PAGE = 1_000;

export class PgHistory {
  private readonly parsed: ParsedMessages;

  /** `maxCachedBytes`: heap the parsed messages may hold (default 8 MiB; see ParsedMessages). */
  constructor(maxCachedBytes?: number) {
    this.parsed = new ParsedMessages(maxCachedBytes);
  }

  /** The thread's replayed history (its summary first, if any), inside the caller's read transaction. */
  async load(q: PgQueries, thread: ThreadRow, options: LoadHistoryOptions): Promise<Message[]> {
    const summaryRow = thread.summary_seq === null ? undefined : await q.rowAt(thread.id, thread.summary_seq);
    const summary = summaryRow ? this.parsed.messageOf(summaryRow) : undefined;
    const head = summary ? [summary] : [];
    if (options.tokenBudget === undefined) {
      const rows = await q.rowsFrom(thread.id, thread.replay_seq);
      return [...head, ...rows.filter((r) => r.seq !== thread.summary_seq).map(rowToMessage)];
    }
    const estimate = options.estimate ?? roughTokenEstimate;
    const trimmer = new BudgetTrimmer(options.tokenBudget - (summary ? estimate(summary) : 0), estimate);
    await this.eachNewestFirst(q, thread, options.expectedMessages, (m) => trimmer.push(m));
    return [...head, ...trimmer.result()];
  }

  /**
   * The thread's replayed messages, newest first, until `take` returns false: a page of places
   * at a time (the first sized by what the caller expects to take), and a whole row only for a
   * place not parsed before, read with the next uncached places (up to a page) in one round trip.
   */
  private async eachNewestFirst(q: PgQueries, thread: ThreadRow, expected: number | undefined, take: (message: Message) => boolean): Promise<void> {
    let limit = Math.min(MAX_FIRST_PAGE, Math.max(HISTORY_PAGE, Math.ceil(expected ?? 0)));
    for (let before = Number.MAX_SAFE_INTEGER; ; limit = HISTORY_PAGE) {
      const places = await q.placesNewestFirst(thread.id, thread.replay_seq, before, limit);
      let rows = new Map<number, MessageRow>();
      for (let i = 0; i < places.length; i++) {
        const place = places[i]!;
        if (place[1] === thread.summary_seq) continue;
        // A row parsed just now can push the cache over its budget and clear it: a place found
        // cached when the rows were read is then read again.
        let message = this.parsed.get(thread.id, place);
        if (!message) {
          if (!rows.has(place[1])) rows = await q.rowsAtSeqs(thread.id, this.uncachedFrom(thread, places, i));
          const row = rows.get(place[1]);
          // The places and the rows come from one snapshot (a read transaction).
          if (!row) throw new SessionStoreError(`message ${place[0]} vanished from its thread while the history was read`);
          message = this.parsed.parse(row);
        }
        if (!take(message)) return;
      }
      if (places.length < limit) return;
      before = places[places.length - 1]![1];
    }
  }

  /** The seq at `places[from]` and those of the next places not parsed before, up to a page. */
  private uncachedFrom(thread: ThreadRow, places: readonly RowPlace[], from: number): number[] {
    const seqs = [places[from]![1]];
    for (let j = from + 1; j < places.length && seqs.length < HISTORY_PAGE; j++) {
      const place = places[j]!;
      if (place[1] !== thread.summary_seq && !this.parsed.get(thread.id, place)) seqs.push(place[1]);
    }
    return seqs;
  }
}
