/**
 * The `nanobot` program before any command is added: its global options and its output and
 * exit handling, which subcommands inherit (so this runs before they are added).
 */
import { Command } from "commander";
import type { CliContext } from "./context.js";

export function createBaseProgram(ctx: CliContext): Command {
  const { io } = ctx;
  return new Command("nanobot")
    .description("An MCP-native agent runtime and personal-assistant gateway")
    .version(ctx.version, "-v, --version", "print the version")
    .option("-c, --config <path>", "configuration file (JSON or YAML) or a directory holding one")
    .helpOption("-h, --help", "show help")
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      outputError: (s, write) => write(ctx.colors.err.red(s)),
    });
}
