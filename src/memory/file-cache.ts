/**
 * Workspace files the system prompt is built from (bootstrap files, MEMORY.md, SKILL.md) are
 * read on every turn but rarely change: a file is read again only when its size or mtime did.
 * A stat is far cheaper than reading and re-parsing the text; edits show up on the next turn.
 */
import { readFileSync, statSync } from "node:fs";

interface Entry {
  mtimeMs: number;
  size: number;
  text: string;
}

/** Enough for every workspace's bootstrap files and skills; cleared wholesale past it. */
const MAX_ENTRIES = 512;
const cache = new Map<string, Entry>();

/**
 * The file's UTF-8 text, or undefined when there is no file at `path`. A missing file costs a
 * stat and nothing more: no error is built for it (an optional bootstrap file or memory file is
 * missing on every turn of a workspace without one). Throws like `readFileSync` for the rest
 * (unreadable, a folder).
 */
export function readTextIfPresent(path: string): string | undefined {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) {
    cache.delete(path);
    return undefined;
  }
  const hit = cache.get(path);
  if (hit && hit.mtimeMs === stat.mtimeMs && hit.size === stat.size) return hit.text;
  const text = readFileSync(path, "utf8");
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(path, { mtimeMs: stat.mtimeMs, size: stat.size, text });
  return text;
}
