/** find_files: paths matching a glob, found by a bounded walk of the tree. */
import picomatch from "picomatch";
import { z } from "zod";
import type { Tool } from "../tool.js";
import { defineTool, errorResult } from "./define-tool.js";
import { fmt, IGNORED_DIRS, walk, type WalkState } from "./walk.js";
import type { WorkspaceGuard } from "./workspace-guard.js";

export const FIND_DEFAULT_RESULTS = 200;
export const FIND_MAX_RESULTS = 1_000;
/** Entries visited before the search stops and says so. */
export const FIND_MAX_VISITED = 100_000;

const schema = z.object({
  pattern: z.string().min(1).describe('Glob such as "*.ts", "src/**/*.test.ts" or "**/README*". Without a "/" it matches file names at any depth.'),
  path: z.string().min(1).optional().describe("Directory to search (default: the workspace)."),
  max_results: z.number().int().min(1).max(FIND_MAX_RESULTS).optional().describe(`Maximum paths returned (default ${FIND_DEFAULT_RESULTS}).`),
  include_ignored: z.boolean().optional().describe(`Also search ${[...IGNORED_DIRS].join(", ")} (default false).`),
});

export function createFindFilesTool(guard: WorkspaceGuard): Tool {
  return defineTool({
    name: "find_files",
    description:
      `Find files and directories whose path matches a glob (picomatch syntax: *, **, ?, {a,b}, [abc]). ` +
      `Paths are relative to the searched directory; directories end with "/". Returns at most ` +
      `${FIND_DEFAULT_RESULTS} paths by default and visits at most ${fmt(FIND_MAX_VISITED)} entries; ` +
      `${[...IGNORED_DIRS].join(", ")} are skipped unless include_ignored is true.`,
    schema,
    readOnly: true,
    async run(args, ctx, signal) {
      const target = args.path ?? ".";
      const checked = await guard.checkDirectory(target, ctx, "Use read_file to read a file.");
      if (!checked.ok) return errorResult(checked.error);
      let matches: (path: string) => boolean;
      try {
        matches = picomatch(args.pattern, { dot: true, basename: !args.pattern.includes("/") });
      } catch (error) {
        return errorResult(`Error: invalid glob ${JSON.stringify(args.pattern)}: ${(error as Error).message}`);
      }
      const max = args.max_results ?? FIND_DEFAULT_RESULTS;
      const state: WalkState = { visited: 0, truncated: false };
      const found: string[] = [];
      let more = false;
      const walker = walk(checked.path, { recursive: true, includeIgnored: args.include_ignored === true, maxVisited: FIND_MAX_VISITED, signal, openDir: guard.dirOpener(ctx.workspace) }, state);
      for await (const entry of walker) {
        if (!matches(entry.rel)) continue;
        if (found.length >= max) {
          more = true;
          break;
        }
        found.push(entry.rel + (entry.dirent.isDirectory() ? "/" : ""));
      }
      const notes: string[] = [];
      if (more) notes.push(`Stopped at ${max} results; narrow the pattern or raise max_results.`);
      if (state.refused) notes.push(`${state.refused} director${state.refused === 1 ? "y that" : "ies that"} changed into a link during the search ${state.refused === 1 ? "was" : "were"} skipped.`);
      if (state.truncated) notes.push(`Stopped after visiting ${fmt(FIND_MAX_VISITED)} entries; search a subdirectory for complete results.`);
      if (found.length === 0) return `No paths match ${JSON.stringify(args.pattern)} in ${target}.${notes.length ? ` (${notes.join(" ")})` : ""}`;
      return found.join("\n") + (notes.length ? `\n\n(${notes.join(" ")})` : "");
    },
  });
}
