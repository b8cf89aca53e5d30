/**
 * `nanobot completion`, `service` and `logs` through the CLI's main(): the completion script
 * loads in a real bash and completes commands; the unit `service install` writes is accepted by
 * `systemd-analyze verify`; `logs` renders and filters the gateway's JSON log.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appendFile } from "node:fs/promises";
import { runCliInProcess } from "../support/cli-in-process.js";
import { startNanobot } from "../support/nanobot-cli.js";
import type { InProcessRun } from "../support/cli-in-process.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "nanobot-terminal-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function run(args: string[]): Promise<InProcessRun> {
  return runCliInProcess(args, { env: { HOME: root, NANOBOT_HOME: join(root, "nb"), PATH: process.env["PATH"] ?? "" }, cwd: root });
}

const hasCommand = (name: string): boolean => {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`]);
    return true;
  } catch {
    return false;
  }
};

describe("nanobot completion", () => {
  it("bash: the script loads and completes commands, subcommands and options", async () => {
    const r = await run(["completion", "bash"]);
    expect(r.code).toBe(0);
    const file = join(root, "c.bash");
    await writeFile(file, r.out);
    const complete = (words: string[]): string =>
      execFileSync("bash", ["-c", `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _nanobot; echo "\${COMPREPLY[*]}"`], { encoding: "utf8" }).trim();
    expect(complete(["nanobot", "ses"])).toBe("sessions");
    expect(complete(["nanobot", "sessions", ""]).split(" ")).toEqual(expect.arrayContaining(["list", "show", "export", "import"]));
    expect(complete(["nanobot", "logs", "--fo"])).toBe("--follow");
  });

  it.runIf(hasCommand("zsh") && hasCommand("fish"))("zsh and fish: the scripts parse and register (zsh and fish from apt; .ci/run installs them)", async () => {
    const zsh = join(root, "c.zsh");
    await writeFile(zsh, (await run(["completion", "zsh"])).out);
    expect(execFileSync("zsh", ["-c", `autoload -U compinit; compinit -u; source ${zsh}; echo \${_comps[nanobot]}`], { encoding: "utf8" }).trim()).toBe("_nanobot");
    const fish = join(root, "c.fish");
    await writeFile(fish, (await run(["completion", "fish"])).out);
    expect(execFileSync("fish", ["-c", `source ${fish}; complete -C "nanobot sessions "`], { encoding: "utf8" })).toMatch(/^list\t/m);
  });

  it("an unknown shell is a usage error", async () => {
    expect((await run(["completion", "tcsh"])).code).toBe(2);
  });
});

describe("nanobot service", () => {
  it("install --no-start writes a systemd user unit that systemd-analyze verify accepts; uninstall removes it", async () => {
    const r = await run(["service", "install", "--no-start", "--platform", "linux", "--json"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as { file: string; started: boolean };
    expect(report.file).toBe(join(root, ".config", "systemd", "user", "nanobot-gateway.service"));
    const unit = await readFile(report.file, "utf8");
    expect(unit).toMatch(/^ExecStart=\S+node \S+\/bin\/nanobot\.js gateway$/m);
    expect(unit).toContain(`Environment=NANOBOT_HOME=${join(root, "nb")}`);
    if (hasCommand("systemd-analyze")) execFileSync("systemd-analyze", ["verify", report.file]);
    expect((await run(["service", "status", "--platform", "linux"])).out).toContain("installed, not running");
    expect((await run(["service", "install", "--no-start", "--platform", "linux"])).code).toBe(0);
    const un = await run(["service", "uninstall", "--platform", "linux"]);
    expect(un.out).toContain(`removed ${report.file}`);
    expect((await run(["service", "status", "--platform", "linux"])).code).toBe(1);
  });

  it("install where the service manager does not answer: the file is written, the commands to start it printed, exit 1", async () => {
    const noManager = join(root, "empty-bin");
    await mkdir(noManager);
    const r = await runCliInProcess(["service", "install", "--platform", "linux"], { env: { HOME: root, NANOBOT_HOME: join(root, "nb"), PATH: noManager }, cwd: root });
    expect(r.code).toBe(1);
    expect(r.out).toContain("the service manager did not answer");
    expect(r.out).toContain("start it with: systemctl --user daemon-reload && systemctl --user enable --now nanobot-gateway.service");
    expect(await readFile(join(root, ".config", "systemd", "user", "nanobot-gateway.service"), "utf8")).toContain("ExecStart=");
  });

  it("darwin: a launchd plist with the gateway's arguments", async () => {
    const r = await run(["service", "install", "--no-start", "--platform", "darwin", "--json"]);
    const plist = await readFile((JSON.parse(r.out) as { file: string }).file, "utf8");
    expect(plist).toContain("<string>ai.nanobot.gateway</string>");
    expect(plist).toMatch(/<string>[^<]*bin\/nanobot\.js<\/string>\s*<string>gateway<\/string>/);
  });
});

describe("nanobot logs", () => {
  it("renders the gateway's JSON lines, filters by level, and --json prints them as they are", async () => {
    await mkdir(join(root, "nb", "logs"), { recursive: true });
    const lines = [
      { level: 30, time: Date.UTC(2026, 11, 7, 12), msg: "gateway listening", url: "http://127.0.0.1:18790" },
      { level: 40, time: Date.UTC(2026, 11, 7, 12, 1), msg: "MCP server fs failed to start" },
      { level: 20, time: Date.UTC(2026, 11, 7, 12, 2), msg: "turn done" },
    ];
    await writeFile(join(root, "nb", "logs", "gateway.log"), `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const all = await run(["logs"]);
    expect(all.out).toBe(
      "2026-12-07T12:00:00.000Z INFO  gateway listening url=http://127.0.0.1:18790\n" +
        "2026-12-07T12:01:00.000Z WARN  MCP server fs failed to start\n" +
        "2026-12-07T12:02:00.000Z DEBUG turn done\n",
    );
    expect((await run(["logs", "--level", "warn"])).out).toBe("2026-12-07T12:01:00.000Z WARN  MCP server fs failed to start\n");
    expect((await run(["logs", "-n", "1", "--json"])).out).toBe(`${JSON.stringify(lines[2])}\n`);
  });

  it("-n reads back past a large log's tail window to find the last lines at the level asked", async () => {
    await mkdir(join(root, "nb", "logs"), { recursive: true });
    const debug = JSON.stringify({ level: 20, time: 0, msg: "x".repeat(100) });
    const warn = JSON.stringify({ level: 40, time: 0, msg: "the only warning" });
    await writeFile(join(root, "nb", "logs", "gateway.log"), `${warn}\n${`${debug}\n`.repeat(5000)}`);
    expect((await run(["logs", "--level", "warn", "-n", "5", "--json"])).out).toBe(`${warn}\n`);
    expect((await run(["logs", "-n", "2", "--json"])).out).toBe(`${debug}\n${debug}\n`);
  });

  it("-f follows a running log in a real process: new lines appear, a truncated log is read again from its start", async () => {
    const log = join(root, "nb", "logs", "gateway.log");
    await mkdir(join(root, "nb", "logs"), { recursive: true });
    await writeFile(log, `${JSON.stringify({ level: 30, time: 0, msg: "before" })}\n`);
    const p = startNanobot(["logs", "-f"], { cwd: root, env: { HOME: root, NANOBOT_HOME: join(root, "nb") } });
    try {
      await p.waitFor(/INFO {2}before/);
      await appendFile(log, `${JSON.stringify({ level: 40, time: 0, msg: "appended" })}\n`);
      await p.waitFor(/WARN {2}appended/);
      await writeFile(log, `${JSON.stringify({ level: 50, time: 0, msg: "rotated" })}\n`);
      await p.waitFor(/ERROR rotated/);
    } finally {
      expect(await p.stop()).toBe(0);
    }
  });

  it("no log yet: says where it looks and how to start the gateway, exit 1", async () => {
    const r = await run(["logs"]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("start the gateway: nanobot gateway");
  });
});
