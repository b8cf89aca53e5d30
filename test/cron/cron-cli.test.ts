import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerCronCommand } from "../../src/cli/commands/cron.js";
import type { CliContext } from "../../src/cli/context.js";
import { readCronJobs, cronJobsPath } from "../../src/cron/cron-store.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-cron-cli-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const ctx = {
    io: { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) }, env: { HOME: root, NANOBOT_HOME: join(root, "nb") }, cwd: root },
    exitCode: 0,
  } as unknown as CliContext;
  const program = new Command().exitOverride();
  registerCronCommand(program, ctx);
  await program.parseAsync(["node", "nanobot", ...args]);
  return { code: ctx.exitCode, out, err };
}

describe("nanobot cron", () => {
  it("adds, lists and removes jobs in $NANOBOT_HOME/cron/jobs.json", async () => {
    const added = await run(["cron", "add", "-m", "Daily summary", "-n", "daily", "--cron", "0 8 * * *", "--tz", "Europe/Paris", "-s", "telegram:42", "--channel", "telegram", "--chat", "42"]);
    expect(added.code).toBe(0);
    expect(added.out).toMatch(/^added cron\S* \(cron "0 8 \* \* \*" \(Europe\/Paris\)\), next run \d{4}-/);
    const jobs = readCronJobs(cronJobsPath(join(root, "nb")));
    expect(jobs).toMatchObject([{ name: "daily", sessionKey: "telegram:42", channel: "telegram", chatId: "42", schedule: { kind: "cron", expr: "0 8 * * *", tz: "Europe/Paris" } }]);
    const list = await run(["cron", "list"]);
    expect(list.out.split("\n")[0]).toMatch(/^ID\s+NAME\s+SCHEDULE\s+SESSION\s+NEXT RUN\s+LAST$/);
    expect(list.out).toContain("daily");
    const json = JSON.parse((await run(["cron", "list", "--json"])).out) as Array<{ id: string }>;
    expect(json).toHaveLength(1);
    expect((await run(["cron", "remove", json[0]!.id])).out).toBe(`removed ${json[0]!.id}\n`);
    expect((await run(["cron", "list"])).out).toBe("no scheduled jobs\n");
  });

  it("rejects a missing or double schedule and a bad expression with exit 2", async () => {
    expect(await run(["cron", "add", "-m", "x"])).toMatchObject({ code: 2, err: "error: give exactly one of --every, --at or --cron\n" });
    expect(await run(["cron", "add", "-m", "x", "--every", "5", "--at", "2026-01-01T00:00:00Z"])).toMatchObject({ code: 2 });
    const bad = await run(["cron", "add", "-m", "x", "--cron", "61 * * * *"]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/^error: invalid cron expression "61 \* \* \* \*"/);
    expect((await run(["cron", "remove", "nope"])).code).toBe(1);
  });
});
