/**
 * Opening files so that a symlink swap after the path check cannot escape the workspace.
 *
 * A path check alone is a time-of-check/time-of-use race: between `realpath` and `open`, a
 * directory can be replaced by a symlink to somewhere else. So every file tool opens first and
 * checks what it opened:
 * - the final component is opened with `O_NOFOLLOW` (a link that appears there fails instead of
 *   being followed; the path was fully resolved just before, so a legitimate link is gone);
 * - the open descriptor's own path, as the kernel holds it (`/proc/self/fd/<fd>`), must lie
 *   inside the allowed roots, whatever happened to the path's directories meanwhile;
 * - writes never create anything before their directory is checked: the parent directory is
 *   opened and checked first, and the file (and any missing directories) are created through
 *   `/proc/self/fd/<dirfd>/<name>`, which names the checked directory itself, not a path that
 *   could be swapped again (an `openat` in Node terms).
 * Without `/proc` (macOS, BSD) the check falls back to `realpath` after opening plus a
 * device/inode comparison with the descriptor: a swap is still detected for reads, but a write
 * could create an empty file through a swapped parent before it is refused.
 */
import { constants, existsSync, type Stats } from "node:fs";
import { mkdir, open, readlink, realpath, stat, type FileHandle } from "node:fs/promises";
import path from "node:path";

const PROC_FD = "/proc/self/fd";
/** Decided once: a Linux host without /proc mounted takes the fallback, never a silent pass. */
const HAS_PROC_FD = existsSync(PROC_FD);

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** The opened object lies outside the allowed roots (a link or a swap led there). */
export class PathEscapeError extends Error {
  constructor(readonly real: string) {
    super(`resolves to ${real}, outside the allowed roots`);
    this.name = "PathEscapeError";
  }
}

/** The path changed between resolution and opening (a symlink appeared at the last step). */
export class PathChangedError extends Error {
  constructor(readonly target: string) {
    super(`${target} changed while it was being opened (a symbolic link appeared); try again`);
    this.name = "PathChangedError";
  }
}

/** `undefined` roots mean unrestricted (`tools.restrictToWorkspace: false`). */
export type Roots = readonly string[] | undefined;

export function isInside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Where an open descriptor really is. */
async function heldPath(handle: FileHandle, opened: string): Promise<string> {
  if (HAS_PROC_FD) return readlink(`${PROC_FD}/${handle.fd}`);
  const real = await realpath(opened);
  const [held, named] = await Promise.all([handle.stat(), stat(real)]);
  if (held.dev !== named.dev || held.ino !== named.ino) throw new PathChangedError(opened);
  return real;
}

async function verified(handle: FileHandle, opened: string, roots: Roots): Promise<string> {
  try {
    const real = await heldPath(handle, opened);
    if (roots && !roots.some((root) => isInside(real, root))) throw new PathEscapeError(real);
    return real;
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}

async function openNoFollow(target: string, flags: number, mode?: number): Promise<FileHandle> {
  try {
    return await open(target, flags | O_NOFOLLOW, mode);
  } catch (error) {
    if (errno(error) === "ELOOP") throw new PathChangedError(target);
    throw error;
  }
}

export interface OpenedFile {
  handle: FileHandle;
  /** The path the kernel holds for the descriptor. */
  real: string;
  stats: Stats;
}

/**
 * Opens a resolved path for reading and checks the descriptor. `O_NONBLOCK` keeps a FIFO from
 * hanging the open; callers refuse anything that is not a regular file or directory.
 */
export async function openReadChecked(resolved: string, roots: Roots): Promise<OpenedFile> {
  const handle = await openNoFollow(resolved, O_RDONLY | O_NONBLOCK);
  const real = await verified(handle, resolved, roots);
  return { handle, real, stats: await handle.stat() };
}

export interface OpenedDir {
  handle: FileHandle;
  real: string;
  /** A path naming this very directory (through its descriptor where the OS allows). */
  base: string;
  close(): Promise<void>;
}

/** Opens a resolved directory and checks the descriptor; children are reached through `base`. */
export async function openDirChecked(resolved: string, roots: Roots): Promise<OpenedDir> {
  const handle = await openNoFollow(resolved, O_RDONLY | O_DIRECTORY);
  const real = await verified(handle, resolved, roots);
  return { handle, real, base: HAS_PROC_FD ? `${PROC_FD}/${handle.fd}` : real, close: () => handle.close() };
}

/** Opens (creating missing ones when asked) the directory `dir`, every step checked. */
async function openParent(dir: string, roots: Roots, createMissing: boolean): Promise<OpenedDir> {
  try {
    return await openDirChecked(dir, roots);
  } catch (error) {
    if (errno(error) !== "ENOENT" || !createMissing || path.dirname(dir) === dir) throw error;
  }
  const parent = await openParent(path.dirname(dir), roots, true);
  try {
    const child = `${parent.base}/${path.basename(dir)}`;
    await mkdir(child).catch((error: unknown) => {
      if (errno(error) !== "EEXIST") throw error;
    });
    // Opened through the parent's descriptor, so the checked parent is the one we created in.
    return await openDirChecked(child, roots);
  } finally {
    await parent.close();
  }
}

export interface WriteOpenOptions {
  /** Create the file (and missing parent directories) when absent. */
  create: boolean;
  /** Open for reading too (edit_file reads the content it replaces). */
  read?: boolean;
}

export interface OpenedForWrite extends OpenedFile {
  created: boolean;
}

/**
 * Opens a resolved path for writing without truncating it: the caller truncates only after
 * its own checks (a refused write must not have emptied the file).
 */
export async function openWriteChecked(resolved: string, roots: Roots, options: WriteOpenOptions): Promise<OpenedForWrite> {
  const dir = await openParent(path.dirname(resolved), roots, options.create);
  try {
    const target = `${dir.base}/${path.basename(resolved)}`;
    // O_NONBLOCK: opening a FIFO for writing would otherwise wait for a reader forever.
    const access = (options.read ? O_RDWR : O_WRONLY) | O_NONBLOCK;
    let handle: FileHandle | undefined;
    let created = false;
    if (options.create) {
      try {
        handle = await openNoFollow(target, access | O_CREAT | O_EXCL, 0o666);
        created = true;
      } catch (error) {
        if (errno(error) !== "EEXIST") throw error;
      }
    }
    handle ??= await openNoFollow(target, access);
    const real = await verified(handle, resolved, roots);
    return { handle, real, stats: await handle.stat(), created };
  } finally {
    await dir.close();
  }
}

/** Replaces the whole content of an open file (positioned writes: the read offset is irrelevant). */
export async function replaceContent(handle: FileHandle, content: string): Promise<number> {
  const bytes = Buffer.from(content, "utf8");
  await handle.truncate(0);
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, written);
    written += bytesWritten;
  }
  return bytes.length;
}
