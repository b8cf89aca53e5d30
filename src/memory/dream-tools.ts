/**
 * The only tools Dream gets: read, write and edit of MEMORY.md, SOUL.md and USER.md. Any other
 * path is refused, whatever the model asks for, so a dream can never touch the rest of the
 * workspace.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { defineTool, errorResult } from "../tools/builtin/define-tool.js";
import type { Tool } from "../tools/tool.js";
import { DREAM_WRITABLE_FILES } from "./templates.js";

const ALLOWED_NAMES = "MEMORY.md, SOUL.md, USER.md";

/** `MEMORY.md` and `memory/MEMORY.md` both mean the memory file; anything else outside the list is refused. */
export function dreamFilePath(file: string): string | undefined {
  const name = file.trim().replace(/^\.\//, "");
  const rel = name === "MEMORY.md" ? "memory/MEMORY.md" : name;
  return (DREAM_WRITABLE_FILES as readonly string[]).includes(rel) ? rel : undefined;
}

const fileArg = z.string().min(1).describe(`One of ${ALLOWED_NAMES}.`);

/** `edited` collects the workspace-relative files the dream changed. */
export function createDreamTools(workspace: string, edited: Set<string>): Tool[] {
  const resolve = (file: string): string | undefined => dreamFilePath(file);
  const refused = (file: string) => errorResult(`Error: ${file} is not writable here; only ${ALLOWED_NAMES} can be read or edited.`);
  const read = (rel: string): string => {
    try {
      return readFileSync(join(workspace, rel), "utf8");
    } catch {
      return "";
    }
  };
  return [
    defineTool({
      name: "read_memory_file",
      description: `Read one of ${ALLOWED_NAMES}.`,
      schema: z.object({ file: fileArg }),
      readOnly: true,
      async run(args) {
        const rel = resolve(args.file);
        return rel ? read(rel) || "(empty)" : refused(args.file);
      },
    }),
    defineTool({
      name: "write_memory_file",
      description: `Replace the whole content of one of ${ALLOWED_NAMES}.`,
      schema: z.object({ file: fileArg, content: z.string() }),
      async run(args) {
        const rel = resolve(args.file);
        if (!rel) return refused(args.file);
        writeFileSync(join(workspace, rel), args.content.endsWith("\n") ? args.content : `${args.content}\n`);
        edited.add(rel);
        return `Wrote ${rel}.`;
      },
    }),
    defineTool({
      name: "edit_memory_file",
      description: `Replace one exact occurrence of old_text by new_text in one of ${ALLOWED_NAMES}.`,
      schema: z.object({ file: fileArg, old_text: z.string().min(1), new_text: z.string() }),
      async run(args) {
        const rel = resolve(args.file);
        if (!rel) return refused(args.file);
        const text = read(rel);
        const at = text.indexOf(args.old_text);
        if (at < 0) return errorResult(`Error: old_text was not found in ${rel}; read the file and copy the text exactly.`);
        if (text.indexOf(args.old_text, at + 1) >= 0) return errorResult(`Error: old_text occurs more than once in ${rel}; include more context.`);
        writeFileSync(join(workspace, rel), text.slice(0, at) + args.new_text + text.slice(at + args.old_text.length));
        edited.add(rel);
        return `Edited ${rel}.`;
      },
    }),
  ];
}
