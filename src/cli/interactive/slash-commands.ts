/**
 * The interactive chat's own `/` commands and tab completion. Commands not listed here are
 * sent to the agent as a message, so the agent loop's commands (`/stop`, `/status`, …) work too.
 */

export interface SlashCommand {
  name: string;
  help: string;
}

export const LOCAL_COMMANDS: readonly SlashCommand[] = [
  { name: "/help", help: "show the commands" },
  { name: "/new", help: "start a new thread (the current one is archived)" },
  { name: "/reasoning", help: "show or hide the model's reasoning" },
  { name: "/clear", help: "clear the screen" },
  { name: "/quit", help: "leave (also /exit, exit, Ctrl-D)" },
  { name: "/exit", help: "leave" },
];

/** Commands the agent loop answers; completed here too so they are discoverable. */
export const AGENT_COMMANDS: readonly string[] = ["/stop", "/status", "/threads"];

/** readline's completer: `/` prefixes complete to command names. */
export function completeCommand(line: string): [string[], string] {
  if (!line.startsWith("/") || line.includes(" ")) return [[], line];
  const all = [...LOCAL_COMMANDS.map((c) => c.name), ...AGENT_COMMANDS];
  const hits = all.filter((name) => name.startsWith(line));
  return [hits.length > 0 ? hits : all, line];
}

export function helpText(): string {
  const width = Math.max(...LOCAL_COMMANDS.map((c) => c.name.length)) + 2;
  const lines = LOCAL_COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.help}`);
  return [
    "commands:",
    ...lines,
    `  other /commands go to the agent (${AGENT_COMMANDS.join(", ")})`,
    "  end a line with \\ to continue on the next line; Ctrl-C stops a turn, twice exits",
  ].join("\n");
}
