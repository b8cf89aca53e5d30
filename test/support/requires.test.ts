/**
 * Issue 21, item 1: a suite that needs a system service runs where it is installed, skips with
 * one line saying what to install where it is not, and fails under CI=true. The service is
 * hidden with NANOBOT_TEST_HIDE; the probe suite runs in its own vitest process.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { needs } from "./requires.js";

const repo = fileURLToPath(new URL("../..", import.meta.url));
const config = fileURLToPath(new URL("fixtures/vitest.config.ts", import.meta.url));
const vitest = fileURLToPath(new URL("../../node_modules/vitest/vitest.mjs", import.meta.url));

function probe(env: Record<string, string>): { code: number | null; output: string } {
  const { CI: _ci, NANOBOT_TEST_HIDE: _hide, ...base } = process.env;
  const r = spawnSync(process.execPath, [vitest, "run", "--config", config], {
    cwd: repo,
    encoding: "utf8",
    env: { ...base, NO_COLOR: "1", FORCE_COLOR: "0", ...env },
    timeout: 60_000,
  });
  return { code: r.status, output: `${r.stdout}${r.stderr}` };
}

const INSTALL_LINE = "skipped: these tests need tmux (hidden by NANOBOT_TEST_HIDE) — install it with: apt-get install tmux";

// The probe's own test needs tmux too, so this suite does (it proves the "runs" case).
needs.tmux().describe("a suite that needs a system service", () => {
  it("runs where the service is installed", { timeout: 60_000 }, () => {
    const r = probe({});
    expect(r.code).toBe(0);
    expect(r.output).toMatch(/1 passed/);
    expect(r.output).not.toContain("skipped:");
  });

  it("skips with one line saying what to install when it is missing", { timeout: 60_000 }, () => {
    const r = probe({ NANOBOT_TEST_HIDE: "tmux" });
    expect(r.code).toBe(0);
    expect(r.output.split("\n").filter((l) => l.includes(INSTALL_LINE))).toHaveLength(1);
    expect(r.output).toMatch(/1 skipped/);
  });

  it("fails instead under CI=true", { timeout: 60_000 }, () => {
    const r = probe({ NANOBOT_TEST_HIDE: "tmux", CI: "true" });
    expect(r.code).toBe(1);
    expect(r.output).toContain("needs tmux");
    expect(r.output).toContain("CI=true: a missing service fails instead of skipping");
  });
});
