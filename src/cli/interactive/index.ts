export { runInteractive } from "./repl.js";
export type { InteractiveOptions } from "./repl.js";
export { TurnOutput, toolLine } from "./turn-output.js";
export { commandNames, completeCommand, helpText, TERMINAL_COMMANDS } from "./slash-commands.js";
