/**
 * Runs the official MCP conformance suite (`conformance server --suite all`) against the test
 * profile of our server and compares with `.ci/conformance-baseline.json`: the test fails only
 * when a scenario the baseline lists as passing fails now (a regression). Offline: the suite
 * and the server both run on this machine.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProfileServer } from "./profile-server.js";
import type { ProfileServer } from "./profile-server.js";
import { readResults, repo, runSuite } from "./suite-runner.js";

interface Baseline {
  suite: string;
  passing: string[];
  knownFailures: string[];
}

let server: ProfileServer;
let outDir: string;

beforeAll(async () => {
  server = await startProfileServer();
  outDir = await mkdtemp(path.join(tmpdir(), "nanobot-conformance-"));
});
afterAll(async () => {
  await server?.close();
  await rm(outDir, { recursive: true, force: true });
});

describe("MCP conformance suite against the server's test profile", () => {
  it("has no regressions against .ci/conformance-baseline.json", async () => {
    const baseline = JSON.parse(await readFile(path.join(repo, ".ci/conformance-baseline.json"), "utf8")) as Baseline;
    const run = await runSuite(server.url, baseline.suite, outDir);
    const results = await readResults(outDir);
    expect(results.length, `the suite ran no scenario:\n${run.output.slice(-2000)}`).toBeGreaterThan(0);

    const failing = new Set(results.filter((r) => r.failed.length > 0).map((r) => r.scenario));
    const ran = new Set(results.map((r) => r.scenario));
    const checksPassed = results.reduce((n, r) => n + r.passed, 0);
    const checksFailed = results.reduce((n, r) => n + r.failed.length, 0);
    // A scenario with neither a passed nor a failed check (e.g. only warnings) proves nothing.
    const inconclusive = results.filter((r) => r.passed === 0 && r.failed.length === 0).map((r) => r.scenario);
    // A passing scenario that fails, vanishes or stops proving anything is a regression.
    const regressions = baseline.passing.filter((s) => failing.has(s) || !ran.has(s) || inconclusive.includes(s));
    const newlyPassing = baseline.knownFailures.filter((s) => ran.has(s) && !failing.has(s));
    const unknownFailures = [...failing].filter((s) => !baseline.passing.includes(s) && !baseline.knownFailures.includes(s));

    console.log(
      `MCP conformance: ${ran.size - failing.size - inconclusive.length}/${ran.size} scenarios passed, ${checksPassed} checks passed, ${checksFailed} failed` +
        (inconclusive.length ? `; inconclusive: ${inconclusive.join(", ")}` : "") +
        (newlyPassing.length ? `; now passing (remove from knownFailures): ${newlyPassing.join(", ")}` : "") +
        (unknownFailures.length ? `; failing, not in the baseline: ${unknownFailures.join(", ")}` : ""),
    );
    const details = results
      .filter((r) => regressions.includes(r.scenario))
      .map((r) => `${r.scenario}: ${r.failed.length > 0 ? r.failed.map((c) => `${c.id} ${c.errorMessage ?? ""}`).join("; ") : "no check passed"}`);
    expect(regressions, `regressions:\n${details.join("\n")}`).toEqual([]);
  }, 170_000);
});
