/**
 * The interactive chat's `/` commands and tab completion. `/help` lists the agent's command
 * registry (the same list every face shows) and then the few commands only a terminal has.
 * Commands not handled here are sent to the agent loop, which answers its registry's commands.
 */
import { createBuiltinCommands } from "../../agent/commands/builtin.js";
import type { CommandRegistry } from "../../agent/commands/registry.js";

export interface SlashCommand {
  name: string;
  help: string;
}

/** Commands that only make sense in a terminal; handled here, never sent to the agent. */
export const TERMINAL_COMMANDS: readonly SlashCommand[] = [
  { name: "/reasoning", help: "show or hide the model's reasoning" },
  { name: "/clear", help: "clear the screen" },
  { name: "/quit", help: "leave (also /exit, exit, Ctrl-D)" },
  { name: "/exit", help: "leave" },
];

/** Registry commands the terminal runs itself (so they work without an agent loop too). */
export const LOCAL_REGISTRY_COMMANDS: readonly string[] = ["/help", "/new"];

/** Every name `/help` lists in the terminal: the registry's, then the terminal's own. */
export function commandNames(registry: CommandRegistry = createBuiltinCommands()): string[] {
  return [...registry.list().map((c) => `/${c.name}`), ...TERMINAL_COMMANDS.map((c) => c.name)];
}

/** readline's completer: `/` prefixes complete to command names. */
export function completeCommand(line: string, registry?: CommandRegistry): [string[], string] {
  if (!line.startsWith("/") || line.includes(" ")) return [[], line];
  const all = commandNames(registry);
  const hits = all.filter((name) => name.startsWith(line));
  return [hits.length > 0 ? hits : all, line];
}

export function helpText(registry: CommandRegistry = createBuiltinCommands()): string {
  const width = Math.max(...TERMINAL_COMMANDS.map((c) => c.name.length)) + 2;
  return [
    "Commands:",
    ...registry.helpLines(),
    "In this terminal:",
    ...TERMINAL_COMMANDS.map((c) => `${c.name.padEnd(width)}${c.help}`),
    "End a line with \\ to continue on the next line; Ctrl-C stops a turn, twice exits.",
  ].join("\n");
}
