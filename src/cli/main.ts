/**
 * The `nanobot` command line. Each command lives in `commands/<name>.ts` and is added by its
 * `register<Name>Command(program, ctx)`. Exit codes (CONTRACT.md): 0 ok, 1 failure,
 * 2 usage or configuration error.
 */
import { Command, CommanderError } from "commander";
import { ConfigError, errorMessage } from "../core/errors.js";
import { scrubSecretText } from "../core/scrub.js";
import { registerAgentCommand } from "./commands/agent.js";
import { registerChannelsCommand } from "./commands/channels.js";
import { registerConfigCommand } from "./commands/config.js";
import { registerCronCommand } from "./commands/cron.js";
import { registerGatewayCommand } from "./commands/gateway.js";
import { registerMcpCommand } from "./commands/mcp.js";
import { registerOnboardCommand } from "./commands/onboard.js";
import { registerServeMcpCommand } from "./commands/serve-mcp.js";
import { registerPairingCommand } from "../channels/pairing-cli.js";
import { registerSessionsCommand } from "./commands/sessions.js";
import { registerStatusCommand } from "./commands/status.js";
import { registerStoreCommand } from "./commands/store.js";
import { createContext } from "./context.js";
import type { CliContext } from "./context.js";
import { processIo } from "./io.js";
import type { CliIo } from "./io.js";
import { packageVersion } from "../core/version.js";
import { describeSystemError } from "./system-error.js";

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** Builds the program; exposed so tests can inspect commands and options. */
export function buildProgram(ctx: CliContext): Command {
  const { io } = ctx;
  const program = new Command("nanobot");
  // Configure before adding commands: subcommands inherit output and exit handling.
  program
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
  registerAgentCommand(program, ctx);
  registerConfigCommand(program, ctx);
  registerGatewayCommand(program, ctx);
  registerOnboardCommand(program, ctx);
  registerMcpCommand(program, ctx);
  registerServeMcpCommand(program, ctx);
  registerPairingCommand(program, ctx);
  registerChannelsCommand(program, ctx);
  registerCronCommand(program, ctx);
  registerStatusCommand(program, ctx);
  registerSessionsCommand(program, ctx);
  registerStoreCommand(program, ctx);
  return program;
}

/**
 * Runs the CLI. `argv` is `process.argv`-shaped (`[node, script, ...args]`). Resolves to the
 * exit code; never calls process.exit.
 */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const ctx = createContext(io, packageVersion());
  const program = buildProgram(ctx);
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
