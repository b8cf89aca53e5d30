/**
 * Resolving a path the way the kernel would when it is written to, including links whose
 * target does not exist yet. `realpath` fails on a dangling link, and stopping at the nearest
 * existing ancestor would take `ws/link -> /outside/new` for `ws/link`: writing there then
 * creates `/outside/new`. Here every link is followed by reading it, existing or not.
 */
import { lstat, readlink, realpath } from "node:fs/promises";
import path from "node:path";

/** Linux's own limit on links followed in one resolution. */
const MAX_LINKS = 40;

export class LinkLoopError extends Error {
  constructor(readonly target: string) {
    super(`too many levels of symbolic links while resolving ${target}`);
    this.name = "LinkLoopError";
  }
}

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** Absolute path with every symlink followed; a missing tail is kept as written. */
export async function resolvePath(target: string): Promise<string> {
  try {
    return await realpath(target);
  } catch (error) {
    const code = errno(error);
    if (code === "ELOOP") throw new LinkLoopError(target);
    if (code !== "ENOENT" && code !== "ENOTDIR") return path.resolve(target);
  }
  return resolveByWalking(path.resolve(target));
}

async function resolveByWalking(absolute: string): Promise<string> {
  const pending = absolute.split("/").filter(Boolean);
  let current = "/";
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift() as string;
    if (part === ".") continue;
    if (part === "..") {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    let isLink: boolean;
    try {
      isLink = (await lstat(next)).isSymbolicLink();
    } catch {
      // Missing from here on: nothing below can be a link yet.
      return path.join(next, ...pending);
    }
    if (!isLink) {
      current = next;
      continue;
    }
    links += 1;
    if (links > MAX_LINKS) throw new LinkLoopError(absolute);
    let link: string;
    try {
      link = await readlink(next);
    } catch (error) {
      // Changed since lstat (a swap in progress): take what is there now.
      if (errno(error) === "EINVAL") {
        current = next;
        continue;
      }
      return path.join(next, ...pending);
    }
    if (path.isAbsolute(link)) current = "/";
    pending.unshift(...link.split("/").filter(Boolean));
  }
  return current;
}
