/**
 * A lock file beside the cron jobs file, so the gateway and `nanobot cron add/remove` never
 * interleave a read-modify-write. Held for one small read and write, so waiting is a short
 * synchronous sleep. A lock whose owner died (crash, kill -9) is taken over.
 */
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";

/** A lock older than this is a leftover even if its pid was reused by another process. */
const STALE_MS = 30_000;
const WAIT_MS = 10_000;
const POLL_MS = 5;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

function sleepSync(ms: number): void {
  Atomics.wait(sleeper, 0, 0, ms);
}

function ownerAlive(lockPath: string): boolean {
  let text: string;
  try {
    text = readFileSync(lockPath, "utf8");
    if (Date.now() - statSync(lockPath).mtimeMs > STALE_MS) return false;
  } catch {
    return true; // vanished between our attempts: just try again
  }
  const pid = Number.parseInt(text, 10);
  // Written but not yet filled in by its owner: give it the benefit of the doubt.
  if (!Number.isInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Runs `fn` holding `<path>.lock`; throws when another live process holds it for too long. */
export function withFileLock<T>(path: string, fn: () => T): T {
  const lockPath = `${path}.lock`;
  const deadline = Date.now() + WAIT_MS;
  let fd: number | undefined;
  while (fd === undefined) {
    try {
      fd = openSync(lockPath, "wx");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      if (!ownerAlive(lockPath)) {
        try {
          unlinkSync(lockPath);
        } catch {
          // another waiter took it over first
        }
        continue;
      }
      if (Date.now() > deadline) throw new Error(`${lockPath} is held by another nanobot process; try again`);
      sleepSync(POLL_MS);
    }
  }
  try {
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return fn();
  } finally {
    try {
      unlinkSync(lockPath);
    } catch {
      // already removed by a takeover after a very long hold
    }
  }
}
