/**
 * Directory walking and file sniffing shared by list_dir, find_files and grep. Symlinked
 * directories are never followed (no loops, no escaping the workspace through a link): each
 * directory is opened without following a link at its last step, its descriptor is checked by
 * the caller's `openDir`, and it is listed through that descriptor, so a directory swapped for
 * a link during the walk is skipped, not followed. Every walk has a ceiling on visited entries
 * so a huge tree cannot stall a turn.
 */
import type { Dirent } from "node:fs";
import { readdir, type FileHandle } from "node:fs/promises";
import path from "node:path";
import { PathChangedError, PathEscapeError, type OpenedDir } from "./fs-safe-open.js";

/** Directories skipped unless the caller asks for them: noise for a model, huge, or VCS state. */
export const IGNORED_DIRS: ReadonlySet<string> = new Set([".git", "node_modules", "__pycache__", ".venv", ".hg", ".svn"]);

export interface WalkEntry {
  /** Path relative to the walk root, with `/` separators. */
  rel: string;
  abs: string;
  dirent: Dirent;
  depth: number;
}

export interface WalkOptions {
  recursive: boolean;
  includeIgnored?: boolean;
  /** Stop after visiting this many entries; `truncated` is set on the result. */
  maxVisited: number;
  signal?: AbortSignal;
  /** Opens and checks one directory (WorkspaceGuard.openDir). */
  openDir: (abs: string) => Promise<OpenedDir>;
}

export interface WalkState {
  visited: number;
  truncated: boolean;
  /** Directories skipped because they changed into a link or led outside during the walk. */
  refused?: number;
}

/** Directories opened and read ahead of the one being yielded (bounded: each holds an fd briefly). */
const LOOKAHEAD = 8;

type Listing = { entries: Dirent[] } | { refused: boolean };

/** Opens, checks, reads and closes one directory; never rejects. */
async function list(abs: string, openDir: WalkOptions["openDir"]): Promise<Listing> {
  let opened: OpenedDir | undefined;
  try {
    opened = await openDir(abs);
    return { entries: await readdir(opened.base, { withFileTypes: true }) };
  } catch (error) {
    return { refused: error instanceof PathEscapeError || error instanceof PathChangedError };
  } finally {
    await opened?.close().catch(() => undefined);
  }
}

/**
 * Breadth-first walk in sorted order (stable output for the model and for tests).
 * The generator's consumer may stop early; `state.truncated` tells whether the ceiling hit.
 * The next few queued directories are listed concurrently (the checked open costs three
 * calls per directory; overlapping them keeps big trees as fast as a plain readdir walk).
 */
export async function* walk(root: string, options: WalkOptions, state: WalkState): AsyncGenerator<WalkEntry> {
  type Item = { abs: string; rel: string; depth: number; listing?: Promise<Listing> };
  const queue: Item[] = [{ abs: root, rel: "", depth: 0 }];
  while (queue.length > 0) {
    const dir = queue.shift();
    if (!dir) break;
    options.signal?.throwIfAborted();
    for (const next of queue.slice(0, LOOKAHEAD)) next.listing ??= list(next.abs, options.openDir);
    const listing = await (dir.listing ?? list(dir.abs, options.openDir));
    if (!("entries" in listing)) {
      if (listing.refused) state.refused = (state.refused ?? 0) + 1;
      continue; // unreadable directory: skip it rather than fail the whole walk
    }
    const entries = listing.entries;
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const dirent of entries) {
      if (state.visited >= options.maxVisited) {
        state.truncated = true;
        return;
      }
      if (dirent.isDirectory() && !options.includeIgnored && IGNORED_DIRS.has(dirent.name)) continue;
      state.visited += 1;
      const rel = dir.rel ? `${dir.rel}/${dirent.name}` : dirent.name;
      const abs = path.join(dir.abs, dirent.name);
      yield { rel, abs, dirent, depth: dir.depth };
      if (options.recursive && dirent.isDirectory()) queue.push({ abs, rel, depth: dir.depth + 1 });
    }
  }
}

/** Bytes sniffed to decide text vs binary. */
const SNIFF_BYTES = 8192;

/** A NUL byte or a high share of control bytes means binary (what git and grep do too). */
export function looksBinary(sample: Uint8Array): boolean {
  if (sample.length === 0) return false;
  let control = 0;
  for (const byte of sample) {
    if (byte === 0) return true;
    if (byte < 7 || (byte > 13 && byte < 32 && byte !== 27)) control += 1;
  }
  return control / sample.length > 0.1;
}

/** The first bytes of an open file (positioned read: the handle's offset is untouched). */
export async function sniffHandle(handle: FileHandle): Promise<Uint8Array> {
  const buffer = Buffer.alloc(SNIFF_BYTES);
  const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
  return buffer.subarray(0, bytesRead);
}

export function isPdf(sample: Uint8Array): boolean {
  return Buffer.from(sample.subarray(0, 5)).toString("latin1") === "%PDF-";
}

/** `12,345` — numbers in notes the model reads (without Intl, whose first use loads ICU data). */
export function fmt(n: number): string {
  const [whole = "", fraction] = String(n).split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}
