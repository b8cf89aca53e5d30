/**
 * Directory walking and file sniffing shared by list_dir, find_files and grep. Symlinked
 * directories are never followed (no loops, no escaping the workspace through a link), and
 * every walk has a ceiling on visited entries so a huge tree cannot stall a turn.
 */
import type { Dirent } from "node:fs";
import { open, readdir } from "node:fs/promises";
import path from "node:path";

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
}

export interface WalkState {
  visited: number;
  truncated: boolean;
}

/**
 * Breadth-first walk in sorted order (stable output for the model and for tests).
 * The generator's consumer may stop early; `state.truncated` tells whether the ceiling hit.
 */
export async function* walk(root: string, options: WalkOptions, state: WalkState): AsyncGenerator<WalkEntry> {
  const queue: Array<{ abs: string; rel: string; depth: number }> = [{ abs: root, rel: "", depth: 0 }];
  while (queue.length > 0) {
    const dir = queue.shift();
    if (!dir) break;
    options.signal?.throwIfAborted();
    let entries: Dirent[];
    try {
      entries = await readdir(dir.abs, { withFileTypes: true });
    } catch {
      continue; // unreadable directory: skip it rather than fail the whole walk
    }
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

export async function sniffFile(file: string): Promise<Uint8Array> {
  const handle = await open(file, "r");
  try {
    const buffer = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
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
