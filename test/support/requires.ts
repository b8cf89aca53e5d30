/**
 * Tests that need a system service (Dovecot, Chromium, tmux, bubblewrap) run only where it is
 * installed. Where it is missing they skip, and say once, in one line, what to install; with
 * `CI=true` a missing service fails instead, so CI never passes by skipping.
 *
 *   const tmux = requireCommand("tmux", { install: "apt-get install tmux" });
 *   tmux.describe("the REPL under tmux", () => { … });
 *
 * `NANOBOT_TEST_HIDE=tmux,dovecot` makes the named services look missing (to check the skip
 * line and the CI failure on a machine that has them).
 */
import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { describe, it } from "vitest";

export interface RequireOptions {
  /** The command that installs it, shown in the skip line. */
  install: string;
  /** An absolute path the tests use instead of a PATH lookup (e.g. `/usr/sbin/dovecot`). */
  path?: string;
  /** Arguments for a trial run that must exit 0 (a binary that exists but cannot work is missing). */
  probe?: string[];
}

export interface Requirement {
  readonly name: string;
  /** The binary's absolute path; undefined when missing. */
  readonly path: string | undefined;
  readonly available: boolean;
  /** Why it is missing (undefined when available). */
  readonly reason: string | undefined;
  /** A describe that runs, skips with the install line, or fails under `CI=true`. */
  describe(name: string, body: () => void): void;
  /** The same for a single test. */
  it(name: string, body: () => Promise<void> | void, timeout?: number): void;
}

const announced = new Set<string>();

function hidden(name: string): boolean {
  const list = process.env["NANOBOT_TEST_HIDE"] ?? "";
  return list.split(",").map((s) => s.trim()).includes(name);
}

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function locate(command: string, explicit: string | undefined): string | undefined {
  if (explicit !== undefined) return executable(explicit) ? explicit : undefined;
  if (isAbsolute(command)) return executable(command) ? command : undefined;
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    if (dir !== "" && executable(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

function inCi(): boolean {
  const ci = (process.env["CI"] ?? "").toLowerCase();
  return ci !== "" && ci !== "false" && ci !== "0";
}

/** Finds `command` (honouring `NANOBOT_TEST_HIDE`) and returns describe/it wrappers for tests that need it. */
export function requireCommand(command: string, options: RequireOptions): Requirement {
  const hide = hidden(command);
  let path = hide ? undefined : locate(command, options.path);
  let reason: string | undefined;
  if (hide) reason = "hidden by NANOBOT_TEST_HIDE";
  else if (path === undefined) reason = options.path !== undefined ? `no ${options.path}` : "not on PATH";
  if (path !== undefined && options.probe !== undefined) {
    const trial = spawnSync(path, options.probe, { encoding: "utf8", timeout: 10_000 });
    if (trial.status !== 0) {
      reason = `${command} ${options.probe.join(" ")} failed: ${(trial.stderr || trial.error?.message || `exit ${String(trial.status)}`).trim().split("\n")[0]}`;
      path = undefined;
    }
  }
  const available = path !== undefined;
  const line = `these tests need ${command} (${reason ?? ""}) — install it with: ${options.install}`;

  const announce = (): void => {
    if (announced.has(command)) return;
    announced.add(command);
    console.warn(`skipped: ${line}`);
  };
  const failure = (): never => {
    throw new Error(`${line} (CI=true: a missing service fails instead of skipping)`);
  };

  return {
    name: command,
    path,
    available,
    reason,
    describe(name, body) {
      if (available) return void describe(name, body);
      if (inCi()) return void describe(name, () => it(`needs ${command}`, failure));
      announce();
      // Skipped on purpose: the service is not installed here (the line above says what to install).
      describe.skip(`${name} (needs ${command}: ${options.install})`, body);
    },
    it(name, body, timeout) {
      if (available) return void it(name, body, timeout);
      if (inCi()) return void it(`${name} (needs ${command})`, failure);
      announce();
      // Skipped on purpose: the service is not installed here (the line above says what to install).
      it.skip(`${name} (needs ${command}: ${options.install})`, body);
    },
  };
}

/** The services the suite uses, in one place so every test names them and their packages alike. */
export const needs = {
  dovecot: (): Requirement => requireCommand("dovecot", { path: "/usr/sbin/dovecot", install: "apt-get install dovecot-imapd" }),
  chromium: (): Requirement => requireCommand("chromium", { path: "/usr/bin/chromium", install: "apt-get install chromium" }),
  tmux: (): Requirement => requireCommand("tmux", { install: "apt-get install tmux" }),
  /** A trial sandbox too: bwrap that exists but may not create namespaces here counts as missing. */
  bwrap: (): Requirement => requireCommand("bwrap", { install: "apt-get install bubblewrap", probe: ["--ro-bind", "/", "/", "--dev", "/dev", "true"] }),
};
