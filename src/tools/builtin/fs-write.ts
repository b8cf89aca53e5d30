/**
 * write_file: writes a whole file, creating missing parent directories. The file is opened
 * through its checked parent directory and never through a final link (fs-safe-open), so a
 * dangling link or a swap cannot make it create or change a file outside the workspace.
 */
import { z } from "zod";
import type { Tool } from "../tool.js";
import { defineTool, errorResult } from "./define-tool.js";
import { replaceContent } from "./fs-safe-open.js";
import { fmt } from "./walk.js";
import type { WorkspaceGuard } from "./workspace-guard.js";

const schema = z.object({
  path: z.string().min(1).describe("File path, relative to the workspace or absolute."),
  content: z.string().describe("The complete new content of the file."),
});

export function createWriteFileTool(guard: WorkspaceGuard): Tool {
  return defineTool({
    name: "write_file",
    description:
      "Write content to a file, replacing it if it exists and creating missing parent directories. " +
      "Writes the whole file: to change part of an existing file use edit_file instead.",
    schema,
    async run(args, ctx) {
      const opened = await guard.openWrite(args.path, ctx, { create: true });
      if (!opened.ok) return errorResult(opened.error);
      try {
        if (!opened.stats.isFile()) return errorResult(`Error: ${args.path} is not a regular file; write_file writes files only.`);
        const bytes = await replaceContent(opened.handle, args.content);
        return `${opened.created ? "Created" : "Overwrote"} ${args.path} (${fmt(bytes)} bytes).`;
      } finally {
        await opened.handle.close();
      }
    },
  });
}
