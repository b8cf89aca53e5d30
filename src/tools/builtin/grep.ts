/**
 * grep: JavaScript-regex search over a file or a tree, with context lines. Bounded three ways:
 * matches (250), output characters (128,000) and files visited, and each shown line is cut so
 * one minified file cannot fill the whole budget.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
import { z } from "zod";
import type { Tool } from "../tool.js";
import { defineTool, errorResult } from "./define-tool.js";
import { openReadChecked } from "./fs-safe-open.js";
import { fmt, IGNORED_DIRS, looksBinary, walk, type WalkState } from "./walk.js";
import type { WorkspaceGuard } from "./workspace-guard.js";

export const GREP_MAX_MATCHES = 250;
export const GREP_MAX_CHARS = 128_000;
const GREP_MAX_VISITED = 100_000;
/** Files above this size are skipped (logs, dumps): exec with a streaming tool suits them better. */
const GREP_MAX_FILE_BYTES = 10 * 1024 * 1024;
const MAX_LINE_CHARS = 500;

const schema = z.object({
  pattern: z.string().min(1).describe("JavaScript regular expression, e.g. \"function\\s+main\" or \"TODO|FIXME\"."),
  path: z.string().min(1).optional().describe("File or directory to search (default: the workspace)."),
  glob: z.string().min(1).optional().describe('Only search files whose path matches this glob, e.g. "*.ts" or "src/**/*.py".'),
  case_insensitive: z.boolean().optional().describe("Ignore case (default false)."),
  context: z.number().int().min(0).max(10).optional().describe("Lines of context before and after each match (default 0)."),
  max_matches: z.number().int().min(1).max(GREP_MAX_MATCHES).optional().describe(`Maximum matches (default and limit ${GREP_MAX_MATCHES}).`),
  include_ignored: z.boolean().optional().describe(`Also search ${[...IGNORED_DIRS].join(", ")} (default false).`),
});

function clip(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)} …[${fmt(line.length - MAX_LINE_CHARS)} more chars]` : line;
}

interface SearchState {
  matches: number;
  chars: number;
  out: string[];
  stopped?: "matches" | "chars";
}

/** Appends one file's matches (with merged context windows) to the output. */
function searchFile(rel: string, text: string, regex: RegExp, context: number, max: number, state: SearchState): void {
  const lines = text.split(/\r?\n/);
  let lastPrinted = -1;
  for (let i = 0; i < lines.length; i += 1) {
    if (!regex.test(lines[i] ?? "")) continue;
    if (state.matches >= max) {
      state.stopped = "matches";
      return;
    }
    state.matches += 1;
    const from = Math.max(0, i - context, lastPrinted + 1);
    const to = Math.min(lines.length - 1, i + context);
    const block: string[] = [];
    if (context > 0 && lastPrinted >= 0 && from > lastPrinted + 1) block.push("--");
    for (let j = from; j <= to; j += 1) {
      const isMatch = j === i || (j > i && regex.test(lines[j] ?? ""));
      block.push(`${rel}${isMatch ? ":" : "-"}${j + 1}${isMatch ? ":" : "-"} ${clip(lines[j] ?? "")}`);
    }
    const size = block.reduce((n, line) => n + line.length + 1, 0);
    if (state.chars + size > GREP_MAX_CHARS) {
      state.stopped = "chars";
      return;
    }
    state.out.push(...block);
    state.chars += size;
    lastPrinted = to;
    // Matches shown as context are counted too, so skip past them.
    for (let j = i + 1; j <= to; j += 1) if (regex.test(lines[j] ?? "")) state.matches += 1;
    i = to;
  }
}

export function createGrepTool(guard: WorkspaceGuard): Tool {
  return defineTool({
    name: "grep",
    description:
      `Search file contents with a JavaScript regular expression. Output lines are "path:line: text" for ` +
      `matches and "path-line- text" for context. At most ${GREP_MAX_MATCHES} matches and ${fmt(GREP_MAX_CHARS)} ` +
      `characters; long lines are cut at ${MAX_LINE_CHARS} characters. Binary files, files over 10 MB and ` +
      `${[...IGNORED_DIRS].join(", ")} are skipped. Narrow with path or glob when results are capped.`,
    schema,
    readOnly: true,
    async run(args, ctx, signal) {
      let regex: RegExp;
      try {
        regex = new RegExp(args.pattern, args.case_insensitive ? "i" : "");
      } catch (error) {
        return errorResult(`Error: invalid regular expression: ${(error as Error).message}`);
      }
      const target = args.path ?? ".";
      const checked = await guard.check(target, ctx);
      if (!checked.ok) return errorResult(checked.error);
      const info = await stat(checked.path).catch(() => undefined);
      if (!info) return errorResult(`Error: path not found: ${target}`);
      const globMatch = args.glob ? picomatch(args.glob, { dot: true, basename: !args.glob.includes("/") }) : undefined;
      const files: Array<{ rel: string; abs: string }> = [];
      const walkState: WalkState = { visited: 0, truncated: false };
      if (info.isDirectory()) {
        const walker = walk(
          checked.path,
          { recursive: true, includeIgnored: args.include_ignored === true, maxVisited: GREP_MAX_VISITED, signal, openDir: guard.dirOpener(ctx.workspace) },
          walkState,
        );
        for await (const entry of walker) {
          if (entry.dirent.isFile() && (!globMatch || globMatch(entry.rel))) files.push(entry);
        }
      } else {
        files.push({ rel: path.basename(checked.path), abs: checked.path });
      }
      const state: SearchState = { matches: 0, chars: 0, out: [] };
      const max = args.max_matches ?? GREP_MAX_MATCHES;
      let skippedBinary = 0;
      let skippedLarge = 0;
      const roots = guard.confinement(ctx.workspace);
      let skippedChanged = 0;
      for (const file of files) {
        signal.throwIfAborted();
        // Each file is opened without following a final link and its descriptor checked, so a
        // swap during the search cannot make grep read outside the workspace.
        const opened = await openReadChecked(file.abs, roots).catch(() => undefined);
        if (!opened) {
          skippedChanged += 1;
          continue;
        }
        let buffer: Buffer;
        try {
          if (!opened.stats.isFile()) continue;
          if (opened.stats.size > GREP_MAX_FILE_BYTES) {
            skippedLarge += 1;
            continue;
          }
          buffer = await opened.handle.readFile();
        } finally {
          await opened.handle.close();
        }
        if (looksBinary(buffer.subarray(0, 8192))) {
          skippedBinary += 1;
          continue;
        }
        searchFile(file.rel, buffer.toString("utf8"), regex, args.context ?? 0, max, state);
        if (state.stopped) break;
      }
      const notes: string[] = [];
      if (state.stopped === "matches") notes.push(`Stopped at ${max} matches; narrow the pattern, path or glob.`);
      if (state.stopped === "chars") notes.push(`Output capped at ${fmt(GREP_MAX_CHARS)} characters; narrow the pattern, path or glob.`);
      if (walkState.truncated) notes.push(`Stopped after visiting ${fmt(GREP_MAX_VISITED)} entries.`);
      if (skippedBinary > 0) notes.push(`${skippedBinary} binary file(s) skipped.`);
      if (skippedLarge > 0) notes.push(`${skippedLarge} file(s) over 10 MB skipped.`);
      const unreadable = skippedChanged + (walkState.refused ?? 0);
      if (unreadable > 0) notes.push(`${unreadable} path(s) that could not be opened safely (unreadable, or changed into a link) skipped.`);
      const noteText = notes.length ? `\n\n(${notes.join(" ")})` : "";
      if (state.out.length === 0) return `No matches for /${args.pattern}/ in ${target}.${noteText}`;
      return `${state.out.join("\n")}${noteText}`;
    },
  });
}
