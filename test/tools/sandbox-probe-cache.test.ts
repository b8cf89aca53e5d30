/**
 * The bwrap probe's verdict kept between CLI starts (src/tools/builtin/sandbox-probe-cache.ts):
 * a saved verdict is used only while the bwrap file, the machine's boot, the user and the probe
 * are unchanged and it is under an hour old; `nanobot agent -m` (the built CLI, a process per
 * start) then starts no bwrap at all, and `nanobot status` always probes afresh.
 */
import { spawn } from "node:child_process";
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sandboxProbeCacheFile } from "../../src/config/paths.js";
import { PROBE_VERDICT_TTL_MS, readProbeVerdict, writeProbeVerdict } from "../../src/tools/builtin/sandbox-probe-cache.js";
import { startFakeLLM } from "../fakes/fake-llm.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";

const BIN = fileURLToPath(new URL("../../bin/nanobot.js", import.meta.url));

let root: string;
let bwrap: string;
let bootId: string;
let file: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "nanobot-probe-cache-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("readProbeVerdict / writeProbeVerdict", () => {
  let n = 0;
  beforeEach(async () => {
    const dir = path.join(root, `unit-${++n}`);
    await mkdir(dir);
    bwrap = path.join(dir, "bwrap");
    await writeFile(bwrap, "#!/bin/sh\nexit 0\n");
    bootId = path.join(dir, "boot_id");
    await writeFile(bootId, "6f1c2a7e-boot-one\n");
    file = path.join(dir, "cache", "sandbox-probe.json");
  });
  const options = (extra: { now?: number; probe?: string } = {}) => ({ file, probe: extra.probe ?? "--ro-bind / / true", bootIdFile: bootId, ...(extra.now !== undefined ? { now: extra.now } : {}) });
  const AVAILABLE = () => ({ available: true, bwrap });

  it("gives back what was saved, for the same bwrap, boot, user and probe (both verdicts)", async () => {
    writeProbeVerdict(bwrap, AVAILABLE(), options({ now: 1_000 }));
    expect(readProbeVerdict(bwrap, options({ now: 2_000 }))).toEqual(AVAILABLE());
    const refused = { available: false, bwrap, reason: "bwrap cannot create a sandbox here: bwrap: setting up uid map: Permission denied" };
    writeProbeVerdict(bwrap, refused, options({ now: 3_000 }));
    expect(readProbeVerdict(bwrap, options({ now: 4_000 }))).toEqual(refused);
  });

  it("is stale after an hour, and when saved in the future", () => {
    writeProbeVerdict(bwrap, AVAILABLE(), options({ now: 10_000 }));
    expect(readProbeVerdict(bwrap, options({ now: 10_000 + PROBE_VERDICT_TTL_MS }))).toEqual(AVAILABLE());
    expect(readProbeVerdict(bwrap, options({ now: 10_001 + PROBE_VERDICT_TTL_MS }))).toBeUndefined();
    expect(readProbeVerdict(bwrap, options({ now: 9_999 }))).toBeUndefined();
  });

  it("is stale when bwrap is replaced, the machine rebooted, or the probe changed", async () => {
    writeProbeVerdict(bwrap, AVAILABLE(), options({ now: 1_000 }));
    expect(readProbeVerdict(bwrap, options({ now: 1_000, probe: "--unshare-all true" }))).toBeUndefined();
    await writeFile(bootId, "0a9d-boot-two\n");
    expect(readProbeVerdict(bwrap, options({ now: 1_000 }))).toBeUndefined();
    await writeFile(bootId, "6f1c2a7e-boot-one\n");
    expect(readProbeVerdict(bwrap, options({ now: 1_000 }))).toEqual(AVAILABLE());
    // An upgrade (another size and mtime).
    await writeFile(bwrap, "#!/bin/sh\n# bubblewrap 0.11\nexit 0\n");
    expect(readProbeVerdict(bwrap, options({ now: 1_000 }))).toBeUndefined();
  });

  it("ignores a file that is not a verdict, or another bwrap's", async () => {
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, "{ not json");
    expect(readProbeVerdict(bwrap, options())).toBeUndefined();
    const other = path.join(path.dirname(bwrap), "other-bwrap");
    await writeFile(other, "#!/bin/sh\nexit 0\n");
    writeProbeVerdict(other, { available: true, bwrap: other }, options());
    expect(readProbeVerdict(bwrap, options())).toBeUndefined();
    const saved = JSON.parse(await readFile(file, "utf8")) as { stamp: Record<string, unknown>; status: Record<string, unknown> };
    saved.stamp["bwrap"] = bwrap;
    await writeFile(file, JSON.stringify(saved));
    // The stamp names this bwrap now, but the verdict is still the other's.
    expect(readProbeVerdict(bwrap, options())).toBeUndefined();
  });

  it("keeps nothing without a boot id, and a home it cannot write to is not an error", async () => {
    await rm(bootId);
    writeProbeVerdict(bwrap, AVAILABLE(), options());
    await expect(readFile(file, "utf8")).rejects.toThrow(/ENOENT/);
    await writeFile(bootId, "6f1c2a7e-boot-one\n");
    const blocked = path.join(path.dirname(bwrap), "a-file");
    await writeFile(blocked, "");
    expect(() => writeProbeVerdict(bwrap, AVAILABLE(), { ...options(), file: path.join(blocked, "cache", "sandbox-probe.json") })).not.toThrow();
  });
});

describe("nanobot agent -m and status, with a bwrap that counts its runs", () => {
  let fake: FakeLLM;
  let nbHome: string;
  let bin: string;
  let runs: string;

  beforeEach(async () => {
    const dir = await mkdtemp(path.join(root, "cli-"));
    nbHome = path.join(dir, "nb");
    bin = path.join(dir, "bin");
    runs = path.join(dir, "bwrap-runs");
    await mkdir(path.join(nbHome, "workspace"), { recursive: true });
    await mkdir(bin);
    for (const tool of ["sh", "bash", "env"]) await symlink(path.join("/usr/bin", tool), path.join(bin, tool));
    // Succeeds as the probe does on a machine where bwrap works.
    await writeFile(path.join(bin, "bwrap"), `#!/bin/sh\necho run >> '${runs}'\nexit 0\n`);
    await chmod(path.join(bin, "bwrap"), 0o755);
    fake = await startFakeLLM();
    await writeFile(
      path.join(nbHome, "config.json"),
      JSON.stringify({ providers: { custom: { apiBase: fake.openaiBaseURL, apiKey: "sk-test" } }, agents: { defaults: { model: "custom/test-model" } } }),
    );
  });
  afterEach(async () => {
    await fake.close();
  });

  async function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { HOME: path.dirname(nbHome), NANOBOT_HOME: nbHome, PATH: `${bin}:${process.env.PATH ?? ""}`, NO_COLOR: "1" },
      cwd: path.dirname(nbHome),
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    return { code, out, err };
  }
  const probeRuns = async (): Promise<number> => (await readFile(runs, "utf8").catch(() => "")).split("\n").filter(Boolean).length;
  const execDescription = (request: number): string => {
    const body = fake.requests[request]?.body as { tools: Array<{ function: { name: string; description: string } }> };
    return body.tools.find((t) => t.function.name === "exec")?.function.description ?? "";
  };

  it("probes on the first start, not on the next; status probes again", async () => {
    fake.enqueue({ text: "one" }, { text: "two" });
    expect((await cli(["agent", "-m", "hi", "--no-stream"])).out).toContain("one");
    expect(await probeRuns()).toBe(1);
    const saved = JSON.parse(await readFile(sandboxProbeCacheFile(nbHome), "utf8")) as { status: unknown };
    expect(saved.status).toEqual({ available: true, bwrap: path.join(bin, "bwrap") });

    expect((await cli(["agent", "-m", "hi again", "--no-stream"])).out).toContain("two");
    expect(await probeRuns()).toBe(1);
    // The second start described exec from the saved verdict, as the first did from the probe.
    expect(execDescription(0)).toMatch(/^.*Runs in a bubblewrap sandbox/s);
    expect(execDescription(1)).toBe(execDescription(0));

    const status = await cli(["status"]);
    expect(status.code).toBe(0);
    expect(status.out).toContain(`bwrap (${path.join(bin, "bwrap")}; network off)`);
    expect(await probeRuns()).toBe(2);
    fake.assertDone();
  }, 30_000);

  it("a replaced bwrap is probed again, and its verdict replaces the saved one", async () => {
    fake.enqueue({ text: "one" }, { text: "two" });
    await cli(["agent", "-m", "hi", "--no-stream"]);
    expect(await probeRuns()).toBe(1);
    // Now one that cannot build a sandbox (as without user namespaces).
    await writeFile(path.join(bin, "bwrap"), `#!/bin/sh\necho run >> '${runs}'\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n`);
    await cli(["agent", "-m", "hi again", "--no-stream"]);
    expect(await probeRuns()).toBe(2);
    expect(execDescription(1)).toContain("No sandbox (bwrap cannot create a sandbox here: bwrap: No permissions to create new namespace)");
    const saved = JSON.parse(await readFile(sandboxProbeCacheFile(nbHome), "utf8")) as { status: { available: boolean } };
    expect(saved.status.available).toBe(false);
    fake.assertDone();
  }, 30_000);
});
