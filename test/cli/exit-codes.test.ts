/**
 * Issue 21, items 3 and 8 through the built CLI (`bin/nanobot.js`): usage and configuration
 * errors are one `error:` line and exit 2 — never a stack trace or a raw errno.
 */
import { createServer } from "node:net";
import type { AddressInfo, Server } from "node:net";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runNanobot } from "../support/nanobot-cli.js";

let root: string;
let env: Record<string, string>;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-exit-codes-"));
  env = { HOME: root, NANOBOT_HOME: join(root, "home") };
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const nanobot = (args: string[]) => runNanobot(args, { cwd: root, env });

/** One line on stderr, nothing that looks like a stack or an errno code. */
function oneCleanLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(stderr).not.toMatch(/\bat .*\(|E[A-Z]{3,}:|node:internal/);
  return lines[0] ?? "";
}

describe("cron add: a schedule that can never run is a usage error", () => {
  it("a time in the past", async () => {
    const r = await nanobot(["cron", "add", "-m", "too late", "--at", "2020-01-01T09:00:00Z"]);
    expect(r.code).toBe(2);
    expect(oneCleanLine(r.stderr)).toMatch(/^error: the time 2020-01-01T09:00:00Z is in the past \(now is \d{4}-/);
  });

  it("an unknown time zone is blamed, not the expression", async () => {
    const r = await nanobot(["cron", "add", "-m", "x", "--cron", "0 8 * * *", "--tz", "Mars/Olympus_Mons"]);
    expect(r.code).toBe(2);
    expect(oneCleanLine(r.stderr)).toBe('error: unknown time zone "Mars/Olympus_Mons" (expected an IANA name such as Europe/Paris or UTC)');
  });

  it("--tz without --cron", async () => {
    const r = await nanobot(["cron", "add", "-m", "x", "--every", "60", "--tz", "Europe/Paris"]);
    expect(r).toMatchObject({ code: 2, stderr: "error: --tz applies to --cron only\n" });
  });

  it("nothing was written by the refused adds", async () => {
    await nanobot(["cron", "add", "-m", "too late", "--at", "2020-01-01T09:00:00Z"]);
    expect(await nanobot(["cron", "list"])).toMatchObject({ code: 0, stdout: "no scheduled jobs\n" });
  });
});

describe("exit codes: 2 for usage and configuration, one line", () => {
  it("onboard refuses to replace an existing config with exit 2", async () => {
    await mkdir(join(root, "home"), { recursive: true });
    await writeFile(join(root, "home", "config.json"), '{"mine": true}\n');
    const r = await nanobot(["onboard", "--provider", "openai", "--api-key", "sk-x", "--yes"]);
    expect(r.code).toBe(2);
    expect(oneCleanLine(r.stderr)).toBe(`error: ${join(root, "home", "config.json")} already exists; nothing changed (use --force to replace it)`);
    expect(await readFile(join(root, "home", "config.json"), "utf8")).toBe('{"mine": true}\n');
  });

  it("sessions import of a missing file names the file, not ENOENT", async () => {
    const r = await nanobot(["sessions", "import", "missing.jsonl"]);
    expect(r.code).toBe(2);
    expect(oneCleanLine(r.stderr)).toBe(`error: ${join(root, "missing.jsonl")}: no such file or directory`);
  });

  it("gateway on a port in use says so and how to pick another", { timeout: 60_000 }, async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const r = await nanobot(["gateway", "--port", String(port)]);
      expect(r.code).toBe(2);
      expect(r.stdout).not.toContain("listening on");
      // Start-up warnings (no provider, no sandbox) may come first; the error is the last line.
      const last = r.stderr.trimEnd().split("\n").at(-1);
      expect(last).toBe(`error: port ${port} is in use (127.0.0.1:${port}); stop the other program or use --port (or gateway.port) to pick another`);
      expect(r.stderr).not.toMatch(/EADDRINUSE|\bat .*\(/);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
