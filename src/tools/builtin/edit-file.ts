/**
 * edit_file: replaces an exact piece of text. Exactness is the safety: a missing or ambiguous
 * match is an error that shows where the text probably is, never a guess.
 */
import { z } from "zod";
import type { Tool } from "../tool.js";
import { findClosestMatch } from "./closest-match.js";
import { defineTool, errorResult } from "./define-tool.js";
import { replaceContent } from "./fs-safe-open.js";
import type { WorkspaceGuard } from "./workspace-guard.js";

const schema = z.object({
  path: z.string().min(1).describe("File path, relative to the workspace or absolute."),
  old_text: z.string().min(1).describe("Exact text to replace, including whitespace and indentation."),
  new_text: z.string().describe("Replacement text."),
  replace_all: z.boolean().optional().describe("Replace every occurrence instead of requiring exactly one (default false)."),
});

/** Edits are done in memory; larger files should be changed with exec tools. */
const MAX_EDIT_BYTES = 20 * 1024 * 1024;

function lineOf(content: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i += 1) if (content.charCodeAt(i) === 10) line += 1;
  return line;
}

function occurrences(content: string, needle: string): number[] {
  const found: number[] = [];
  let from = 0;
  for (;;) {
    const at = content.indexOf(needle, from);
    if (at < 0) return found;
    found.push(at);
    from = at + needle.length;
  }
}

function notFound(file: string, content: string, oldText: string): string {
  const lines = [`Error: old_text was not found in ${file}. It must match exactly, including whitespace.`];
  const match = findClosestMatch(content, oldText);
  if (match && match.similarity >= 0.5) {
    lines.push(
      `The closest match is at lines ${match.startLine}-${match.endLine} (${Math.round(match.similarity * 100)}% similar):`,
      "```",
      match.text,
      "```",
      "Copy the text exactly from the file (read_file shows it) and try again.",
    );
  } else {
    lines.push("No similar text was found; read the file first to see its current content.");
  }
  return lines.join("\n");
}

export function createEditFileTool(guard: WorkspaceGuard): Tool {
  return defineTool({
    name: "edit_file",
    description:
      "Replace old_text with new_text in a file. old_text must match the file exactly (whitespace " +
      "included) and, unless replace_all is true, occur exactly once — add surrounding lines to make " +
      "it unique. When it does not match, the error shows the most similar lines. Read the file first.",
    schema,
    async run(args, ctx) {
      // Read and written through one checked descriptor: the file edited is the file read.
      const opened = await guard.openWrite(args.path, ctx, { create: false, read: true }, `Error: file not found: ${args.path}. Use write_file to create it.`);
      if (!opened.ok) return errorResult(opened.error);
      const { handle, stats: info } = opened;
      try {
        if (!info.isFile()) return errorResult(`Error: ${args.path} is not a regular file.`);
        if (info.size > MAX_EDIT_BYTES) return errorResult(`Error: ${args.path} is too large to edit here (${info.size} bytes).`);
        const content = await handle.readFile("utf8");
        let oldText = args.old_text;
        let newText = args.new_text;
        let found = occurrences(content, oldText);
        // A model writes "\n"; a Windows file has "\r\n". Retry with the file's line endings.
        if (found.length === 0 && content.includes("\r\n") && !oldText.includes("\r\n")) {
          oldText = oldText.replace(/\n/g, "\r\n");
          newText = newText.replace(/\r?\n/g, "\r\n");
          found = occurrences(content, oldText);
        }
        if (found.length === 0) return errorResult(notFound(args.path, content, args.old_text));
        if (found.length > 1 && args.replace_all !== true) {
          const at = found.slice(0, 10).map((index) => lineOf(content, index));
          return errorResult(
            `Error: old_text occurs ${found.length} times in ${args.path} (at lines ${at.join(", ")}${found.length > 10 ? ", …" : ""}). ` +
              "Include more surrounding context so it matches exactly once, or set replace_all to true.",
          );
        }
        const updated = content.split(oldText).join(newText);
        await replaceContent(handle, updated);
        const count = found.length;
        return `Edited ${args.path}: replaced ${count} occurrence${count === 1 ? "" : "s"} (first at line ${lineOf(content, found[0] ?? 0)}).`;
      } finally {
        await handle.close();
      }
    },
  });
}
