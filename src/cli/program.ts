/**
 * The whole `nanobot` program, every command registered: what `main` runs when the command line
 * names no single known command (top-level help, `help`, a typo that gets a suggestion), and
 * what tests use to inspect commands and options. Each command lives in `commands/<name>.ts`
 * and is added by its `register<Name>Command(program, ctx)`; commands.ts lists them by name.
 */
import type { Command } from "commander";
import { registerAgentCommand } from "./commands/agent.js";
import { registerChannelsCommand } from "./commands/channels.js";
import { registerConfigCommand } from "./commands/config.js";
import { registerCompletionCommand } from "./commands/completion.js";
import { registerCronCommand } from "./commands/cron.js";
import { registerGatewayCommand } from "./commands/gateway.js";
import { registerLogsCommand } from "./commands/logs.js";
import { registerMcpCommand } from "./commands/mcp.js";
import { registerOnboardCommand } from "./commands/onboard.js";
import { registerServeMcpCommand } from "./commands/serve-mcp.js";
import { registerPairingCommand } from "../channels/pairing-cli.js";
import { registerServiceCommand } from "./commands/service.js";
import { registerSessionsCommand } from "./commands/sessions.js";
import { registerStatusCommand } from "./commands/status.js";
import { registerStoreCommand } from "./commands/store.js";
import { createBaseProgram } from "./base-program.js";
import type { CliContext } from "./context.js";

export function buildProgram(ctx: CliContext): Command {
  const program = createBaseProgram(ctx);
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
  registerLogsCommand(program, ctx);
  registerServiceCommand(program, ctx);
  registerCompletionCommand(program, ctx);
  return program;
}
