/** list_dir: the entries of a directory, optionally recursive, capped at 200. */
import { z } from "zod";
import type { Tool } from "../tool.js";
import { defineTool, errorResult } from "./define-tool.js";
import { fmt, IGNORED_DIRS, walk, type WalkState } from "./walk.js";
import type { WorkspaceGuard } from "./workspace-guard.js";

export const LIST_MAX_ENTRIES = 200;
/** Entries visited before a recursive listing gives up counting the rest. */
const LIST_MAX_VISITED = 50_000;

const schema = z.object({
  path: z.string().min(1).optional().describe("Directory to list (default: the workspace)."),
  recursive: z.boolean().optional().describe("List subdirectories too (default false)."),
  include_ignored: z.boolean().optional().describe(`Also descend into ${[...IGNORED_DIRS].join(", ")} (default false).`),
});

export function createListDirTool(guard: WorkspaceGuard): Tool {
  return defineTool({
    name: "list_dir",
    description:
      `List a directory: one entry per line, directories end with "/", symlinks with "@". At most ` +
      `${LIST_MAX_ENTRIES} entries are shown. ${[...IGNORED_DIRS].join(", ")} are skipped unless include_ignored ` +
      `is true. Use recursive for a tree, find_files to search by name.`,
    schema,
    readOnly: true,
    async run(args, ctx, signal) {
      const target = args.path ?? ".";
      const checked = await guard.checkDirectory(target, ctx, "Use read_file to read a file.");
      if (!checked.ok) return errorResult(checked.error);
      const state: WalkState = { visited: 0, truncated: false };
      const shown: string[] = [];
      let total = 0;
      const walker = walk(
        checked.path,
        { recursive: args.recursive === true, includeIgnored: args.include_ignored === true, maxVisited: LIST_MAX_VISITED, signal, openDir: guard.dirOpener(ctx.workspace) },
        state,
      );
      for await (const entry of walker) {
        total += 1;
        if (shown.length >= LIST_MAX_ENTRIES) continue; // keep counting so the note is accurate
        const suffix = entry.dirent.isDirectory() ? "/" : entry.dirent.isSymbolicLink() ? "@" : "";
        shown.push(entry.rel + suffix);
      }
      const changed = state.refused ? `${state.refused} director${state.refused === 1 ? "y" : "ies"} changed into a link or led outside the workspace while listing and ${state.refused === 1 ? "was" : "were"} skipped.` : "";
      if (total === 0) return changed ? errorResult(`Error: ${target}: ${changed}`) : `(${target} is empty)`;
      let text = shown.join("\n");
      if (total > shown.length || state.truncated) {
        const rest = state.truncated ? `more than ${fmt(total - shown.length)}` : fmt(total - shown.length);
        text += `\n\n(Showing ${shown.length} of ${state.truncated ? "more than " : ""}${fmt(total)} entries; ${rest} not shown. List a subdirectory or use find_files to narrow down.)`;
      }
      if (changed) text += `\n\n(${changed})`;
      return text;
    },
  });
}
