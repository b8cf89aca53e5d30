/**
 * The final answer as terminal markdown (marked + marked-terminal), and the arithmetic to
 * erase the raw streamed text it replaces.
 */
import { Marked } from "marked";
import { markedTerminal } from "marked-terminal";

let cached: { width: number; marked: Marked } | undefined;

export function renderTerminalMarkdown(text: string, width: number): string {
  if (cached?.width !== width) cached = { width, marked: new Marked(markedTerminal({ width, reflowText: false, tab: 2 })) };
  return cached.marked.parse(text, { async: false }).replace(/\n+$/, "\n");
}

/** Worth re-rendering: the text uses markdown syntax that looks different when rendered. */
export function looksLikeMarkdown(text: string): boolean {
  return /(^|\n)\s*(#{1,6} |[-*+] |\d+\. |```|> )|\*\*[^*]+\*\*|`[^`]+`|\[[^\]]+\]\([^)]+\)/.test(text);
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

/** Terminal rows `text` occupies when printed from column 0 on a `columns`-wide terminal. */
export function rowsOf(text: string, columns: number): number {
  const cols = Math.max(1, columns);
  return text
    .replace(ANSI, "")
    .split("\n")
    .reduce((rows, line) => rows + Math.max(1, Math.ceil(line.length / cols)), 0);
}
