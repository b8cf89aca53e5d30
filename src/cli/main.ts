/**
 * The `nanobot` command line. Exit codes (CONTRACT.md): 0 ok, 1 failure, 2 usage or
 * configuration error. The program itself is built in program.ts (every command) or, when the
 * command line names one command, from just that command (commands.ts), which starts faster.
 */
import type { Command } from "commander";
import { CommanderError } from "commander";
import { ConfigError, errorMessage } from "../core/errors.js";
import { scrubSecretText } from "../core/scrub.js";
import { createBaseProgram } from "./base-program.js";
import { COMMANDS, singleCommandOf } from "./commands.js";
import { createContext } from "./context.js";
import type { CliContext } from "./context.js";
import { processIo } from "./io.js";
import type { CliIo } from "./io.js";
import { packageVersion } from "../core/version.js";
import { describeSystemError } from "./system-error.js";

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** The program for these arguments: only the named command's module when one is named. */
async function programFor(argv: string[], ctx: CliContext): Promise<Command> {
  const name = singleCommandOf(argv.slice(2));
  if (name === undefined) return (await import("./program.js")).buildProgram(ctx);
  const program = createBaseProgram(ctx);
  (await COMMANDS[name]!())(program, ctx);
  return program;
}

/**
 * Runs the CLI. `argv` is `process.argv`-shaped (`[node, script, ...args]`). Resolves to the
 * exit code; never calls process.exit.
 */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const ctx = createContext(io, packageVersion());
  const program = await programFor(argv, ctx);
  try {
    await program.parseAsync(argv, { from: "node" });
    return ctx.exitCode;
  } catch (err) {
    return exitCodeFor(err, ctx);
  }
}

function exitCodeFor(err: unknown, ctx: CliContext): number {
  if (err instanceof CommanderError) {
    // Help and version "exit" with 0; every other commander error is a usage error
    // (commander already printed its message).
    return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
  }
  const red = ctx.colors.err.red;
  if (err instanceof ConfigError) {
    ctx.io.stderr.write(`${red("error:")} ${scrubSecretText(err.message)}\n`);
    return EXIT_USAGE;
  }
  // A file or port the command was given that cannot be used: one line, never a raw errno.
  const systemLine = describeSystemError(err);
  if (systemLine !== undefined) {
    ctx.io.stderr.write(`${red("error:")} ${systemLine}\n`);
    return EXIT_USAGE;
  }
  // Errors quote command lines and URLs (an MCP server that failed to start).
  ctx.io.stderr.write(`${red("error:")} ${scrubSecretText(errorMessage(err).split("\n")[0] ?? "")}\n`);
  return EXIT_FAILURE;
}
