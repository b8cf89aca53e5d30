/**
 * Start-up speed: every command module pulls in its own dependencies (`status` the MCP SDK,
 * `sessions` both session stores, `channels` the channel adapters), so loading all of them
 * costs every command. When the command line names one command, `main` loads only that one.
 */
import type { Command } from "commander";
import type { CliContext } from "./context.js";

export type RegisterCommand = (program: Command, ctx: CliContext) => void;

/** Each top-level command's registration, loaded on demand (names as program.ts registers them). */
export const COMMANDS: Readonly<Record<string, () => Promise<RegisterCommand>>> = {
  agent: async () => (await import("./commands/agent.js")).registerAgentCommand,
  config: async () => (await import("./commands/config.js")).registerConfigCommand,
  gateway: async () => (await import("./commands/gateway.js")).registerGatewayCommand,
  onboard: async () => (await import("./commands/onboard.js")).registerOnboardCommand,
  mcp: async () => (await import("./commands/mcp.js")).registerMcpCommand,
  "serve-mcp": async () => (await import("./commands/serve-mcp.js")).registerServeMcpCommand,
  pairing: async () => (await import("../channels/pairing-cli.js")).registerPairingCommand,
  channels: async () => (await import("./commands/channels.js")).registerChannelsCommand,
  cron: async () => (await import("./commands/cron.js")).registerCronCommand,
  status: async () => (await import("./commands/status.js")).registerStatusCommand,
  sessions: async () => (await import("./commands/sessions.js")).registerSessionsCommand,
  store: async () => (await import("./commands/store.js")).registerStoreCommand,
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
