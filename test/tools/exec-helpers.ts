/**
 * Helpers for the exec tests that run real commands: whether bubblewrap works here (tests that
 * need it skip with one visible line, and fail instead under CI=true), and a host-side scan
 * for processes that outlived a call (pids printed inside a PID namespace mean nothing here).
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, it } from "vitest";
import { detectBwrap } from "../../src/tools/builtin/sandbox-bwrap.js";

export const BWRAP = detectBwrap();

/** `describe` for tests that need a working bwrap. */
export function describeWithBwrap(name: string, body: () => void): void {
  if (BWRAP.available) {
    describe(name, body);
  } else if (process.env.CI === "true") {
    describe(name, () => {
      it("needs bubblewrap (CI=true: not skipped)", () => {
        throw new Error(`bubblewrap is required in CI: ${BWRAP.reason ?? "unavailable"} — apt-get install bubblewrap`);
      });
    });
  } else {
    console.warn(`[exec tests] skipped "${name}": ${BWRAP.reason ?? "bwrap unavailable"} — install bubblewrap (apt-get install bubblewrap)`);
    describe.skip(`${name} (install bubblewrap to run)`, body);
  }
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
