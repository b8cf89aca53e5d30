/**
 * Start-up speed: every command module pulls in its own dependencies (their heavy parts, the
 * MCP SDK, the channel adapters and the PostgreSQL driver, load where they are used), so
 * loading all of them costs every command. `agent -m` is the path where start-up is the user's
 * wait (and issue #25's measure), so when the command line names `agent`, `main` loads only
 * that command.
 * Only `agent`: each entry here is one more split point for the bundler, and the extra chunks
 * cost the commands that load most of the program anyway (the gateway) in loader time and RSS.
 */
import type { Command } from "commander";
import type { CliContext } from "./context.js";

export type RegisterCommand = (program: Command, ctx: CliContext) => void;

/** Top-level commands loaded on their own (names as program.ts registers them). */
export const COMMANDS: Readonly<Record<string, () => Promise<RegisterCommand>>> = {
  agent: async () => (await import("./commands/agent.js")).registerAgentCommand,
};

/**
 * The command the arguments (after `node script`) name, when only that command is needed to
 * run them: the first argument, after nothing but the global `--config` option. Anything else
 * before it (`-h`, `-v`, an unknown option) or an unknown name returns undefined, and the whole
 * program handles the line, so help, version and error output stay those of the full program.
 */
export function singleCommandOf(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "-c" || arg === "--config") {
      i++;
      continue;
    }
    if (arg.startsWith("--config=") || (arg.startsWith("-c") && arg.length > 2 && !arg.startsWith("--"))) continue;
    return Object.hasOwn(COMMANDS, arg) ? arg : undefined;
  }
  return undefined;
}
