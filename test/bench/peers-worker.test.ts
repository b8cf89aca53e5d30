import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runWorker } from "../../bench/peers-bench.js";
import { runTraced } from "../../bench/support/jit-trace.js";
import { PLAIN_WORKER_DIR, assertLibraryBuilt, plainWorker } from "../../bench/support/plain-worker.js";
import { startFakeLLMProcess, type FakeLLM } from "../../bench/support/processes.js";

describe("peers bench worker", () => {
  let fake: FakeLLM;
  beforeAll(async () => {
    fake = await startFakeLLMProcess(0);
  });
  afterAll(async () => {
    await fake?.close();
  });

  it("runs the product turn as plain JavaScript against the built library and reports its figures", async () => {
    const worker = await plainWorker();
    expect(worker).toBe(join(PLAIN_WORKER_DIR, "worker.js"));
    // The contender loads nanobot from dist/ (what `import "nanobot"` gives), never the sources.
    const contender = readFileSync(join(PLAIN_WORKER_DIR, "nanobot-loop.js"), "utf8");
    expect(contender).toContain('from "../../dist/agent/agent-loop.js"');
    expect(contender).not.toMatch(/from "[^"]*\/src\//);

    const result = await runWorker({ contender: "nanobot-loop", baseURL: fake.baseURL, workload: "loop", history: 0, runs: 2, warmup: 1 });
    expect(result.cpuUsPerRun).toBeGreaterThan(0);
    expect(result.baselineRssMiB).toBeGreaterThan(0);
    expect(result.peakRssMiB).toBeGreaterThanOrEqual(result.baselineRssMiB);
    // Three model requests per turn (the bench-loop script), for the warm-up and both runs.
    expect((await fake.stats()).requests).toBe(9);
  }, 60_000);

  it("measures a session's second turn: each prepared session answers once, untimed, before the warm-up", async () => {
    await fake.reset(0);
    const result = await runWorker({ contender: "nanobot-loop", baseURL: fake.baseURL, workload: "loop", history: 4, runs: 2, warmup: 1, place: "lived" });
    // Three sessions (one warm-up, two measured), each answering the bench-loop script twice.
    expect((await fake.stats()).requests).toBe(3 * 3 * 2);
    expect(result.cpuUsPerRun).toBeGreaterThan(0);
    // The main thread's share is read from /proc in clock ticks: a part of the whole, never more.
    expect(Number.isFinite(result.mainThreadCpuUsPerRun)).toBe(true);
    expect(result.mainThreadCpuUsPerRun).toBeLessThanOrEqual(result.cpuUsPerRun! + 10_000);
  }, 60_000);

  it("marks its measured window for profile-jit: V8's compiles inside it are traced, and the figures come back as usual", async () => {
    await fake.reset(0);
    const { result, trace } = await runTraced(await plainWorker(), { contender: "nanobot-loop", baseURL: fake.baseURL, workload: "loop", history: 0, runs: 40, warmup: 1 });
    expect(trace.sawWindow).toBe(true);
    expect(result.cpuUsPerRun).toBeGreaterThan(0);
    // 40 turns make the turn's own code hot enough for TurboFan inside the window.
    expect(trace.compiles.length).toBeGreaterThan(0);
    for (const c of trace.compiles) expect(c.ms).toBeGreaterThan(0);
    expect((await fake.stats()).requests).toBe(3 * 41);
  }, 120_000);

  it("refuses a library build older than its sources", () => {
    const root = mkdtempSync(join(tmpdir(), "nanobot-plain-worker-"));
    try {
      const src = join(root, "src", "agent");
      const dist = join(root, "dist");
      mkdirSync(src, { recursive: true });
      mkdirSync(dist);
      expect(() => assertLibraryBuilt(join(root, "src"), dist)).toThrow(/index\.js is missing: run `npm run build`/);
      writeFileSync(join(dist, "index.js"), "");
      writeFileSync(join(src, "loop.ts"), "");
      utimesSync(join(dist, "index.js"), new Date(2_000_000_000), new Date(2_000_000_000));
      utimesSync(join(src, "loop.ts"), new Date(3_000_000_000), new Date(3_000_000_000));
      expect(() => assertLibraryBuilt(join(root, "src"), dist)).toThrow(/is older than .*src: run `npm run build`/);
      utimesSync(join(dist, "index.js"), new Date(4_000_000_000), new Date(4_000_000_000));
      expect(() => assertLibraryBuilt(join(root, "src"), dist)).not.toThrow();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
