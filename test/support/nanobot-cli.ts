/**
 * The built CLI as a user runs it: `bin/nanobot.js` (which runs `dist/`, so `npm run build`
 * first) in its own process, with a temp NANOBOT_HOME and only PATH from this environment.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { assertBuilt } from "./built.js";

export const NANOBOT_BIN = fileURLToPath(new URL("../../bin/nanobot.js", import.meta.url));

let checked = false;

/** The CLI runs `dist/`: refuse, once per test process, to run one older than `src/`. */
function assertCliBuilt(): void {
  if (checked) return;
  const bundle = fileURLToPath(new URL("../../dist/bundle/main.cjs", import.meta.url));
  assertBuilt(existsSync(bundle) ? bundle : fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url)), "the CLI tests (`npm test` builds first)");
  checked = true;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliRunOptions {
  cwd: string;
  env: Record<string, string>;
  /** Written to stdin, which is then closed (a pipe: stdin is not a terminal). */
  input?: string;
  timeoutMs?: number;
}

/** Runs one command to its end. */
export function runNanobot(args: string[], options: CliRunOptions): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    assertCliBuilt();
    const child = spawn(process.execPath, [NANOBOT_BIN, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env["PATH"] ?? "", NO_COLOR: "1", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 30_000);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

export interface RunningNanobot {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stdout (or stderr), or throws after `ms`. */
  waitFor(pattern: RegExp, ms?: number): Promise<RegExpExecArray>;
  /** SIGTERM, then waits for the exit code. */
  stop(): Promise<number | null>;
}

/** Starts a long-running command (`gateway`) and returns handles to read and stop it. */
export function startNanobot(args: string[], options: Omit<CliRunOptions, "input" | "timeoutMs">): RunningNanobot {
  assertCliBuilt();
  const child = spawn(process.execPath, [NANOBOT_BIN, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env["PATH"] ?? "", NO_COLOR: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr?.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    async waitFor(pattern, ms = 30_000) {
      const start = Date.now();
      for (;;) {
        const match = pattern.exec(out) ?? pattern.exec(err);
        if (match) return match;
        if (child.exitCode !== null) throw new Error(`nanobot exited (${child.exitCode}) before ${String(pattern)}; stderr:\n${err}`);
        if (Date.now() - start > ms) throw new Error(`timed out waiting for ${String(pattern)}; stderr:\n${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}
