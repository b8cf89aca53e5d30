import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CronService } from "../../src/cron/cron-service.js";
import { cronJobsPath } from "../../src/cron/cron-store.js";
import { heartbeatTasks } from "../../src/cron/heartbeat.js";
import { nextRunAfter } from "../../src/cron/schedule.js";
import { WORKSPACE_TEMPLATES } from "../../src/memory/templates.js";
import { FakeClock } from "./fake-clock.js";

const T0 = Date.UTC(2026, 0, 15, 0, 0, 0);

describe("nextRunAfter", () => {
  it("computes at / every / cron-with-time-zone runs", () => {
    expect(nextRunAfter({ kind: "at", at: "2026-01-15T09:00:00Z" }, T0)).toBe(Date.UTC(2026, 0, 15, 9));
    expect(nextRunAfter({ kind: "at", at: "2026-01-14T09:00:00Z" }, T0)).toBeUndefined();
    expect(nextRunAfter({ kind: "every", everyMs: 60_000 }, T0 + 90_000, T0)).toBe(T0 + 120_000);
    expect(nextRunAfter({ kind: "cron", expr: "0 8 * * *", tz: "Europe/Paris" }, T0)).toBe(Date.UTC(2026, 0, 15, 7));
    expect(nextRunAfter({ kind: "cron", expr: "0 8 * * *", tz: "America/New_York" }, T0)).toBe(Date.UTC(2026, 0, 15, 13));
  });
});

describe("CronService persistence", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "nanobot-cron-"));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("persists jobs, protects system jobs, and rejects bad schedules", async () => {
    const path = cronJobsPath(dir);
    const clock = new FakeClock(T0);
    const service = new CronService({ path, clock, run: async () => ({ status: "ok" }) });
    const job = service.add({ message: "stretch", schedule: { kind: "every", everyMs: 3_600_000 }, sessionKey: "telegram:42", channel: "telegram", chatId: "42" });
    service.ensure({ id: "heartbeat", message: "Check HEARTBEAT.md", schedule: { kind: "every", everyMs: 1_800_000 }, sessionKey: "heartbeat:default" });
    expect(() => service.add({ message: "x", schedule: { kind: "cron", expr: "not a cron" }, sessionKey: "cli:x" })).toThrow(/invalid cron expression/);
    const file = JSON.parse(await readFile(path, "utf8")) as { version: number; jobs: Array<{ id: string; nextRunAt: number }> };
    expect(file.version).toBe(1);
    expect(file.jobs.map((j) => [j.id, j.nextRunAt])).toEqual([
      [job.id, T0 + 3_600_000],
      ["heartbeat", T0 + 1_800_000],
    ]);
    const reloaded = new CronService({ path, clock, run: async () => ({ status: "ok" }) });
    expect(reloaded.list().map((j) => j.name)).toEqual(["stretch", "Check HEARTBEAT.md"]);
    expect(() => reloaded.remove("heartbeat")).toThrow(/system job/);
    expect(reloaded.remove(job.id)).toBe(true);
    expect(reloaded.list().map((j) => j.id)).toEqual(["heartbeat"]);
  });

  it("fires an every job on the fake clock and keeps its run history; one-off jobs disable after running", async () => {
    const clock = new FakeClock(T0);
    const fired: string[] = [];
    const service = new CronService({ path: cronJobsPath(dir), clock, run: async (job) => (fired.push(job.name), { status: "ok", detail: "done" }) });
    service.add({ name: "tick", message: "tick", schedule: { kind: "every", everyMs: 60_000 }, sessionKey: "cli:x" });
    service.add({ name: "once", message: "once", schedule: { kind: "at", at: new Date(T0 + 90_000).toISOString() }, sessionKey: "cli:x" });
    service.start();
    clock.advance(59_000);
    expect(fired).toEqual([]);
    clock.advance(1_000);
    await service.idle();
    clock.advance(60_000);
    await service.idle();
    expect(fired).toEqual(["tick", "once", "tick"]);
    const [tick, once] = service.list();
    expect(tick?.runs.map((r) => r.status)).toEqual(["ok", "ok"]);
    expect(tick?.nextRunAt).toBe(T0 + 180_000);
    expect(once).toMatchObject({ enabled: false, runs: [{ status: "ok", detail: "done" }] });
    service.stop();
  });
});

describe("heartbeatTasks", () => {
  it("finds open list items and ignores the template, comments and checked boxes", () => {
    expect(heartbeatTasks(WORKSPACE_TEMPLATES["HEARTBEAT.md"])).toEqual([]);
    expect(heartbeatTasks("# Tasks\n\n<!-- - hidden -->\n- check mail\n- [x] done already\n- [ ] water plants\n1. call mom\n")).toEqual(["check mail", "water plants", "call mom"]);
    expect(heartbeatTasks("# Heartbeat\n\nNothing yet.\n")).toEqual([]);
  });
});
