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
  return requirement(command, options.install, path, reason, "install it with");
}

/**
 * The same for a service reached over the network (PostgreSQL, …): `probe` says why it cannot
 * be used, or undefined when it can. Run once per file at collection time (top-level await).
 */
export async function requireService(
  name: string,
  options: { start: string; probe: () => Promise<string | undefined> },
): Promise<Requirement> {
  const reason = hidden(name) ? "hidden by NANOBOT_TEST_HIDE" : await options.probe();
  return requirement(name, options.start, reason === undefined ? name : undefined, reason, "start it with");
}

function requirement(name: string, install: string, path: string | undefined, reason: string | undefined, verb: string): Requirement {
  const available = path !== undefined;
  const line = `these tests need ${name} (${reason ?? ""}) — ${verb}: ${install}`;

  const announce = (): void => {
    if (announced.has(name)) return;
    announced.add(name);
    console.warn(`skipped: ${line}`);
  };
  const failure = (): never => {
    throw new Error(`${line} (CI=true: a missing service fails instead of skipping)`);
  };

  return {
    name,
    path,
    available,
    reason,
    describe(title, body) {
      if (available) return void describe(title, body);
      if (inCi()) return void describe(title, () => it(`needs ${name}`, failure));
      announce();
      // Skipped on purpose: the service is missing here (the line above says how to get it).
      describe.skip(`${title} (needs ${name}: ${install})`, body);
    },
    it(title, body, timeout) {
      if (available) return void it(title, body, timeout);
      if (inCi()) return void it(`${title} (needs ${name})`, failure);
      announce();
      // Skipped on purpose: the service is missing here (the line above says how to get it).
      it.skip(`${title} (needs ${name}: ${install})`, body);
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
