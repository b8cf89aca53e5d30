/**
 * The jobs file shared by several writers (the gateway and `nanobot cron`): changes made
 * through one service are never lost by another's write, a lock left by a dead process is
 * taken over, and a started service notices another writer's edits.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CronService } from "../../src/cron/cron-service.js";
import { CRON_SETTLE_MS, cronFileSignature, cronJobsPath, readCronJobs } from "../../src/cron/cron-store.js";
import { FakeClock } from "./fake-clock.js";

const T0 = Date.UTC(2026, 0, 15, 8, 0, 0);
let dir: string;
let path: string;
const services: CronService[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "nanobot-cron-store-"));
  path = cronJobsPath(dir);
});
afterEach(async () => {
  for (const s of services.splice(0)) s.stop();
  await rm(dir, { recursive: true, force: true });
});

function service(clock: FakeClock, fired: string[] = [], watchIntervalMs?: number): CronService {
  const s = new CronService({ path, clock, run: async (job) => (fired.push(job.name), { status: "ok" }), ...(watchIntervalMs ? { watchIntervalMs } : {}) });
  services.push(s);
  return s;
}

/** Remembers the delay of every timer the service sets. */
class ArmRecordingClock extends FakeClock {
  readonly armed: number[] = [];
  override setTimeout(callback: () => void, ms: number): unknown {
    this.armed.push(ms);
    return super.setTimeout(callback, ms);
  }
}

const every = (name: string, everyMs = 60_000) => ({ name, message: name, schedule: { kind: "every" as const, everyMs }, sessionKey: `cli:${name}` });

describe("several writers on one jobs file", () => {
  it("a write from one service never drops another's change", () => {
    const clock = new FakeClock(T0);
    const gateway = service(clock);
    const cli = service(clock);
    gateway.add(every("from-gateway"));
    cli.add(every("from-cli"));
    // The gateway's next write starts from the file, not from what it knew.
    gateway.add(every("again-from-gateway"));
    expect(readCronJobs(path).map((j) => j.name)).toEqual(["from-gateway", "from-cli", "again-from-gateway"]);
    const removedId = gateway.list().find((j) => j.name === "from-cli")?.id as string;
    expect(gateway.remove(removedId)).toBe(true);
    cli.add(every("last"));
    expect(readCronJobs(path).map((j) => j.name)).toEqual(["from-gateway", "again-from-gateway", "last"]);
  });

  it("a due job removed by another writer does not fire, and the others do", async () => {
    const clock = new FakeClock(T0);
    const fired: string[] = [];
    const gateway = service(clock, fired);
    const keep = gateway.add(every("keep"));
    const drop = gateway.add(every("drop"));
    gateway.start();
    service(clock).remove(drop.id);
    clock.advance(60_000);
    await gateway.idle();
    expect(fired).toEqual(["keep"]);
    expect(gateway.get(keep.id)?.runs).toHaveLength(1);
    expect(readCronJobs(path).map((j) => j.name)).toEqual(["keep"]);
  });

  it("a running job another writer removed is stopped even when the service's own write reads the removal first", async () => {
    const clock = new FakeClock(T0);
    let stopped: unknown;
    // Its file watch never polls during the test: the removal reaches it through its own tick's write.
    const gateway = new CronService({
      path,
      clock,
      watchIntervalMs: 600_000,
      run: (job, signal) =>
        job.name === "slow"
          ? new Promise((resolve) => signal.addEventListener("abort", () => ((stopped = signal.reason), resolve({ status: "error", detail: "stopped" })), { once: true }))
          : Promise.resolve({ status: "ok" }),
    });
    services.push(gateway);
    const slow = gateway.add(every("slow", 60_000));
    gateway.add(every("other", 90_000));
    gateway.start();
    clock.advance(60_000);
    expect(stopped).toBeUndefined();
    service(clock).remove(slow.id);
    clock.advance(30_000);
    await gateway.idle();
    expect(String(stopped)).toContain(`cron job ${slow.id} was removed`);
    expect(readCronJobs(path).map((j) => j.name)).toEqual(["other"]);
  });

  it("a started service notices a job another writer added and arms its timer for it", async () => {
    const clock = new ArmRecordingClock(T0);
    const fired: string[] = [];
    const gateway = service(clock, fired, 20);
    gateway.add(every("hourly", 3_600_000));
    gateway.start();
    expect(clock.armed).toEqual([3_600_000]);
    service(clock).add(every("soon", 5_000));
    // Nothing asks the gateway: its file watch (polling every 20 ms here) must see the edit.
    const start = Date.now();
    while (!clock.armed.includes(5_000) && Date.now() - start < 5_000) await new Promise((r) => setTimeout(r, 20));
    expect(clock.armed.at(-1)).toBe(5_000);
    clock.advance(5_000);
    await gateway.idle();
    expect(fired).toEqual(["soon"]);
  });
});

describe("the file watch", () => {
  it("the file system's change events bring another writer's job in without the poll", async () => {
    const clock = new ArmRecordingClock(T0);
    // A poll far beyond the test (by default it is a 5 s backstop): only an event can bring the edit in.
    const gateway = service(clock, [], 600_000);
    gateway.start();
    service(clock).add(every("soon", 5_000));
    const start = Date.now();
    while (!clock.armed.includes(5_000) && Date.now() - start < 4_000) await new Promise((r) => setTimeout(r, 20));
    expect(clock.armed.at(-1)).toBe(5_000);
    // A rename over the file (an editor's save) is seen the same way.
    const edited = readFileSync(path, "utf8").replace('"soon"', '"renamed"');
    writeFileSync(`${path}.tmp`, edited);
    renameSync(`${path}.tmp`, path);
    const renamedAt = Date.now();
    while (clock.armed.length < 2 && Date.now() - renamedAt < 4_000) await new Promise((r) => setTimeout(r, 20));
    expect(gateway.list().map((j) => j.name)).toEqual(["renamed"]);
    expect(clock.armed.length).toBeGreaterThanOrEqual(2);
  });

  it("a same-size edit in place, right after the service wrote the file, is seen", async () => {
    const clock = new ArmRecordingClock(T0);
    const gateway = service(clock, [], 20);
    gateway.add(every("hourly", 3_600_000));
    gateway.start();
    // Same length, same inode, within milliseconds of the service's own write: the signature
    // may or may not move (timestamp ticks), the settle window reads the text regardless.
    writeFileSync(path, readFileSync(path, "utf8").replace('"hourly"', '"HOURLY"'));
    const start = Date.now();
    while (gateway.list()[0]?.name !== "HOURLY" && Date.now() - start < 5_000) await new Promise((r) => setTimeout(r, 20));
    expect(gateway.list().map((j) => j.name)).toEqual(["HOURLY"]);
  });

  it("a file's signature moves with every write and settles once its change time is old", () => {
    service(new FakeClock(T0)).add(every("a", 60_000));
    const first = cronFileSignature(path);
    expect(first.signature).not.toBe("");
    expect(cronFileSignature(path).signature).toBe(first.signature);
    const changed = Number(statSync(path, { bigint: true }).ctimeNs / 1_000_000n);
    expect(cronFileSignature(path, changed + CRON_SETTLE_MS / 2).settled).toBe(false);
    expect(cronFileSignature(path, changed + CRON_SETTLE_MS + 1).settled).toBe(true);
    // A rewrite through a renamed temp file, as every writer does: a new signature.
    writeFileSync(`${path}.tmp`, readFileSync(path, "utf8"));
    renameSync(`${path}.tmp`, path);
    expect(cronFileSignature(path).signature).not.toBe(first.signature);
    expect(cronFileSignature(join(dir, "missing.json"))).toEqual({ signature: "", settled: true });
  });
});

describe("the lock file", () => {
  it("a lock left by a process that died is taken over", async () => {
    await mkdir(join(dir, "cron"), { recursive: true });
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    await writeFile(`${path}.lock`, dead.stdout);
    service(new FakeClock(T0)).add(every("after-a-crash"));
    expect(readCronJobs(path).map((j) => j.name)).toEqual(["after-a-crash"]);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it("a broken jobs file is one clear error, and nothing is overwritten", async () => {
    await mkdir(join(dir, "cron"), { recursive: true });
    await writeFile(path, '{"version": 1, "jobs": [');
    expect(() => service(new FakeClock(T0))).toThrow(`${path}: not valid JSON`);
  });
});
