/**
 * `memory/history.jsonl`: what consolidation summarised, one JSON object per line
 * (`{cursor, timestamp, content, sessionKey}`). Cursors increase by one per entry so Dream can
 * remember how far it has read. Appends are serialised per file inside this process.
 */
import { appendFileSync, closeSync, mkdirSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { HISTORY_FILE } from "./workspace.js";

export interface HistoryEntry {
  cursor: number;
  /** ISO 8601. */
  timestamp: string;
  content: string;
  sessionKey: string;
}

/** How much of the file's end the tail readers look at (recent entries, last cursor). */
const TAIL_BYTES = 64 * 1024;

export class HistoryLog {
  readonly path: string;
  private lastCursor: number | undefined;
  /** The last tail read, kept while the file's size and mtime stay the same (every turn reads it). */
  private tail: { size: number; mtimeMs: number; entries: HistoryEntry[] } | undefined;

  constructor(workspace: string, private readonly now: () => number = Date.now) {
    this.path = join(workspace, HISTORY_FILE);
  }

  /** Appends one entry and returns it. Synchronous so two appends never interleave. */
  append(sessionKey: string, content: string): HistoryEntry {
    // The tail as the file stands: its last cursor, and the cache the append extends.
    const before = this.readTail();
    // Past both this process's last entry and the file's (another nanobot on the same workspace).
    const last = Math.max(this.lastCursor ?? 0, before.at(-1)?.cursor ?? 0);
    const entry: HistoryEntry = { cursor: last + 1, timestamp: new Date(this.now()).toISOString(), content, sessionKey };
    const line = `${JSON.stringify(entry)}\n`;
    try {
      appendFileSync(this.path, line);
    } catch (error) {
      // A workspace whose memory/ folder is missing (deleted, or never scaffolded) must not make
      // every consolidating turn throw ENOENT.
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      mkdirSync(dirname(this.path), { recursive: true });
      appendFileSync(this.path, line);
    }
    this.lastCursor = entry.cursor;
    this.extendTail(entry, Buffer.byteLength(line));
    return entry;
  }

  /**
   * After our own append, the cached tail plus the new entry is the file's tail: the next turn's
   * prompt need not read back what was just written. Only when the file grew by exactly our line
   * (no other process appended in between); otherwise the next read goes to the file.
   */
  private extendTail(entry: HistoryEntry, bytes: number): void {
    const cached = this.tail;
    this.tail = undefined;
    const stat = statSync(this.path, { throwIfNoEntry: false });
    const sizeBefore = cached?.size ?? 0;
    if (!stat || stat.size !== sizeBefore + bytes) return;
    const entries = cached ? [...cached.entries, entry] : [entry];
    // Keep about what a fresh read of the last TAIL_BYTES would hold.
    let kept = bytes;
    let first = entries.length - 1;
    while (first > 0 && kept + approximateBytes(entries[first - 1]!) <= TAIL_BYTES) kept += approximateBytes(entries[--first]!);
    this.tail = { size: stat.size, mtimeMs: stat.mtimeMs, entries: first > 0 ? entries.slice(first) : entries };
  }

  /** Every entry with `cursor > after` (Dream's unprocessed history). */
  entriesAfter(after: number): HistoryEntry[] {
    let text: string;
    try {
      text = readFileSync(this.path, "utf8");
    } catch {
      return [];
    }
    return parseLines(text).filter((e) => e.cursor > after);
  }

  /** The newest `limit` entries of one session, oldest first (for the system prompt). */
  recent(sessionKey: string, limit: number): HistoryEntry[] {
    return this.readTail()
      .filter((e) => e.sessionKey === sessionKey)
      .slice(-limit);
  }

  private readTail(): HistoryEntry[] {
    let stat: { size: number; mtimeMs: number } | undefined;
    try {
      // Until the first consolidation there is no file: no exception for that, every turn.
      stat = statSync(this.path, { throwIfNoEntry: false });
    } catch {
      stat = undefined;
    }
    if (!stat) {
      this.tail = undefined;
      return [];
    }
    if (this.tail && this.tail.size === stat.size && this.tail.mtimeMs === stat.mtimeMs) return this.tail.entries;
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch {
      return [];
    }
    try {
      const start = Math.max(0, stat.size - TAIL_BYTES);
      const buffer = Buffer.alloc(stat.size - start);
      const read = readSync(fd, buffer, 0, buffer.length, start);
      let text = buffer.subarray(0, read).toString("utf8");
      // A tail that starts mid-line drops its first, partial line.
      if (start > 0) text = text.slice(text.indexOf("\n") + 1);
      const entries = parseLines(text);
      this.tail = { size: stat.size, mtimeMs: stat.mtimeMs, entries };
      return entries;
    } finally {
      closeSync(fd);
    }
  }
}

/** An entry's length as a line of the file, near enough to bound the cached tail. */
function approximateBytes(entry: HistoryEntry): number {
  return entry.content.length + entry.sessionKey.length + entry.timestamp.length + 64;
}

function parseLines(text: string): HistoryEntry[] {
  const out: HistoryEntry[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const value = JSON.parse(line) as Partial<HistoryEntry>;
      if (typeof value.cursor === "number" && typeof value.content === "string") {
        out.push({ cursor: value.cursor, timestamp: String(value.timestamp ?? ""), content: value.content, sessionKey: String(value.sessionKey ?? "") });
      }
    } catch {
      // A damaged line (partial write) is skipped; the rest of the log stays usable.
    }
  }
  return out;
}
