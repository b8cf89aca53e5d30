/** write_file: writes a whole file, creating missing parent directories. */
import { mkdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { Tool } from "../tool.js";
import { defineTool, errorResult } from "./define-tool.js";
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
      const checked = await guard.check(args.path, ctx);
      if (!checked.ok) return errorResult(checked.error);
      const existing = await stat(checked.path).catch(() => undefined);
      if (existing?.isDirectory()) return errorResult(`Error: ${args.path} is a directory.`);
      await mkdir(path.dirname(checked.path), { recursive: true });
      await writeFile(checked.path, args.content, "utf8");
      const bytes = Buffer.byteLength(args.content, "utf8");
      return `${existing ? "Overwrote" : "Created"} ${args.path} (${fmt(bytes)} bytes).`;
    },
  });
}
