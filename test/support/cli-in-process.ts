/**
 * The CLI's `main()` run in this process, as tests that need no separate process drive it: what
 * it printed to stdout and stderr, and its exit code. (test/support/nanobot-cli.ts runs the built
 * CLI in its own process instead.)
 */
import { main } from "../../src/cli/main.js";
import type { Env } from "../../src/config/interpolate.js";

export interface InProcessRun {
  code: number;
  out: string;
  err: string;
}

/** Runs `nanobot ...args` with this environment and working directory. */
export async function runCliInProcess(args: readonly string[], options: { env: Env; cwd: string }): Promise<InProcessRun> {
  let out = "";
  let err = "";
  const io = {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: options.env,
    cwd: options.cwd,
  };
  const code = await main(["node", "nanobot", ...args], io);
  return { code, out, err };
}
