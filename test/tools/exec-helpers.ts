/**
 * Helpers for the exec tests that run real commands: whether bubblewrap works here (tests that
 * need it skip with one visible line, and fail instead under CI=true), and a host-side scan
 * for processes that outlived a call (pids printed inside a PID namespace mean nothing here).
 */
import { readdirSync, readFileSync } from "node:fs";
import { needs } from "../support/requires.js";

const bwrap = needs.bwrap();

/** Whether the sandbox tests run (bwrap works here and is not hidden by NANOBOT_TEST_HIDE). */
export const BWRAP = { available: bwrap.available, reason: bwrap.reason };

/** `describe` for tests that need a working bwrap: skips with the install line, fails under CI=true. */
export function describeWithBwrap(name: string, body: () => void): void {
  bwrap.describe(name, body);
}

/** Live (non-zombie) processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ");
      if (!cmdline.includes(marker)) continue;
      const state = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]?.[0];
      if (state !== "Z" && state !== "X") found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/** A sleep duration no other process uses, to find ours by command line. */
export function uniqueSleep(): string {
  return `${1000 + Math.floor(Math.random() * 8000)}.${Math.floor(Math.random() * 1e6)}`;
}

/**
 * The processes still alive with `marker` once a kill has had time to land: a SIGKILLed process
 * leaves /proc a moment after the signal (the kernel reaps it asynchronously, later on a loaded
 * machine), so this looks again for up to `limitMs` before it answers.
 */
export async function survivorsOf(marker: string, limitMs = 3_000): Promise<number[]> {
  const until = Date.now() + limitMs;
  for (;;) {
    const alive = processesWith(marker);
    if (alive.length === 0 || Date.now() >= until) return alive;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
