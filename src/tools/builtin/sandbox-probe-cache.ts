/**
 * The bwrap probe's verdict, kept between starts of the CLI. Trying bwrap means starting a
 * process, which costs a `nanobot agent -m` start ~25 ms of its ~300 on a slow-forking machine,
 * every time, for an answer that rarely changes. A saved verdict is used only while everything it
 * depends on is unchanged: the same bwrap file (path, size, mtime, inode), the same boot of the
 * machine (a reboot can change user-namespace settings), the same user, the same probe, and at
 * most an hour old; otherwise the probe runs again and the file is rewritten. A stale
 * "available" fails closed (bwrap itself refuses, the command does not run); a stale
 * "unavailable" lasts at most the hour, and `nanobot status` always probes afresh.
 *
 * The file lives in the nanobot home beside config.json: whatever could write it could as well
 * set `tools.exec.sandbox: "none"` there. Sandboxed commands never see the nanobot home, and with
 * `restrictToWorkspace` the file tools cannot reach it.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { SandboxStatus } from "./sandbox-bwrap.js";

export const PROBE_VERDICT_TTL_MS = 60 * 60 * 1000;
const BOOT_ID_FILE = "/proc/sys/kernel/random/boot_id";

/** What a saved verdict depends on. */
interface VerdictStamp {
  bwrap: string;
  size: number;
  mtimeMs: number;
  ino: number;
  bootId: string;
  uid: number;
  probe: string;
}

interface SavedVerdict {
  stamp: VerdictStamp;
  at: number;
  status: SandboxStatus;
}

export interface VerdictCacheOptions {
  /** Where the verdict is kept (`<home>/cache/sandbox-probe.json`). */
  file: string;
  /** The probe's own arguments: another probe's verdict is not this one's. */
  probe: string;
  /** Where the machine's boot id is read (tests); no boot id, no caching. */
  bootIdFile?: string;
  now?: number;
}

function stampOf(bwrap: string, options: VerdictCacheOptions): VerdictStamp | undefined {
  try {
    const bootId = readFileSync(options.bootIdFile ?? BOOT_ID_FILE, "utf8").trim();
    if (bootId === "") return undefined;
    const stat = statSync(bwrap);
    return { bwrap, size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, bootId, uid: process.getuid?.() ?? -1, probe: options.probe };
  } catch {
    return undefined;
  }
}

function sameStamp(a: VerdictStamp, b: VerdictStamp): boolean {
  return (Object.keys(b) as Array<keyof VerdictStamp>).every((key) => a[key] === b[key]);
}

function isStatus(value: unknown, bwrap: string): value is SandboxStatus {
  if (typeof value !== "object" || value === null) return false;
  const s = value as Record<string, unknown>;
  return typeof s["available"] === "boolean" && s["bwrap"] === bwrap && (s["reason"] === undefined || typeof s["reason"] === "string");
}

/** The saved verdict for `bwrap`, when it still holds; anything unreadable or stale is ignored. */
export function readProbeVerdict(bwrap: string, options: VerdictCacheOptions): SandboxStatus | undefined {
  const stamp = stampOf(bwrap, options);
  if (stamp === undefined) return undefined;
  let saved: Partial<SavedVerdict>;
  try {
    saved = JSON.parse(readFileSync(options.file, "utf8")) as Partial<SavedVerdict>;
  } catch {
    return undefined;
  }
  const now = options.now ?? Date.now();
  if (typeof saved.at !== "number" || now - saved.at > PROBE_VERDICT_TTL_MS || saved.at > now) return undefined;
  if (typeof saved.stamp !== "object" || saved.stamp === null || !sameStamp(saved.stamp, stamp)) return undefined;
  return isStatus(saved.status, bwrap) ? saved.status : undefined;
}

/** Saves a fresh verdict; best effort (a read-only home just probes every start). */
export function writeProbeVerdict(bwrap: string, status: SandboxStatus, options: VerdictCacheOptions): void {
  const stamp = stampOf(bwrap, options);
  if (stamp === undefined) return;
  const saved: SavedVerdict = { stamp, at: options.now ?? Date.now(), status };
  const temporary = `${options.file}.${process.pid}.tmp`;
  try {
    mkdirSync(path.dirname(options.file), { recursive: true });
    writeFileSync(temporary, `${JSON.stringify(saved)}\n`);
    renameSync(temporary, options.file);
  } catch {
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Nothing was written.
    }
  }
}
