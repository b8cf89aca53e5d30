/**
 * A lock file beside a small JSON state file, for read-modify-write cycles that several
 * processes run on one file (gateway workers sharing `$NANOBOT_HOME`, the CLI beside them).
 * The lock is `<path>.lock`, created exclusively; a holder removes it when done. A lock older
 * than `staleMs` belonged to a process that died mid-write and is taken over.
 */
import { mkdir, open, stat, unlink } from "node:fs/promises";
import { dirname } from "node:path";

export interface FileLockOptions {
  /** A lock older than this is a dead holder's (default 10 s; a write takes milliseconds). */
  staleMs?: number;
  /** Wait between tries (default 10 ms). */
  retryMs?: number;
}

/** Runs `fn` holding `<path>.lock`. */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const lock = `${path}.lock`;
  await mkdir(dirname(lock), { recursive: true });
  await acquire(lock, options.staleMs ?? 10_000, options.retryMs ?? 10);
  try {
    return await fn();
  } finally {
    await unlink(lock).catch(() => undefined);
  }
}

async function acquire(lock: string, staleMs: number, retryMs: number): Promise<void> {
  for (;;) {
    try {
      const handle = await open(lock, "wx", 0o600);
      await handle.writeFile(String(process.pid)).finally(() => handle.close());
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const held = await stat(lock).catch(() => undefined);
    if (held && Date.now() - held.mtimeMs > staleMs) {
      await unlink(lock).catch(() => undefined);
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, retryMs));
  }
}
