/**
 * read_file: a window of a text file with line numbers. The file is streamed line by line and
 * reading stops at the window's end, so a 2 GB log costs no more than the lines returned.
 */
import { createReadStream } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { createInterface } from "node:readline";
import { z } from "zod";
import type { Tool } from "../tool.js";
import { defineTool, errorResult } from "./define-tool.js";
import { fmt, isPdf, looksBinary, sniffHandle } from "./walk.js";
import type { WorkspaceGuard } from "./workspace-guard.js";

export const READ_DEFAULT_LIMIT = 2_000;
export const READ_MAX_CHARS = 128_000;
/** PDFs are parsed in memory; beyond this the parse is refused. */
const PDF_MAX_BYTES = 50 * 1024 * 1024;

const schema = z.object({
  path: z.string().min(1).describe("File path, relative to the workspace or absolute."),
  offset: z.number().int().min(1).optional().describe("1-based line number to start at (default 1)."),
  limit: z.number().int().min(1).max(100_000).optional().describe(`Maximum number of lines to return (default ${READ_DEFAULT_LIMIT}).`),
});

interface Window {
  text: string;
  first: number;
  last: number;
  /** Lines exist after `last`. */
  more: boolean;
  /** The character cap stopped the window early. */
  capped: boolean;
  totalLines?: number;
}

/** Collects numbered lines [offset, offset+limit) under the character cap. */
async function collect(lines: AsyncIterable<string> | Iterable<string>, offset: number, limit: number): Promise<Window> {
  const out: string[] = [];
  let chars = 0;
  let n = 0;
  let last = offset - 1;
  const window: Window = { text: "", first: offset, last, more: false, capped: false };
  for await (const line of lines) {
    n += 1;
    if (n < offset) continue;
    if (n >= offset + limit) {
      window.more = true;
      break;
    }
    let rendered = `${n}| ${line}`;
    if (chars + rendered.length + 1 > READ_MAX_CHARS) {
      if (out.length > 0) {
        window.capped = true;
        window.more = true;
        break;
      }
      // One line alone exceeds the cap: show its head, the model can grep or exec for the rest.
      rendered = `${rendered.slice(0, READ_MAX_CHARS)} … [line ${n} truncated at ${fmt(READ_MAX_CHARS)} characters]`;
      window.capped = true;
    }
    out.push(rendered);
    chars += rendered.length + 1;
    last = n;
  }
  if (!window.more) window.totalLines = n;
  window.text = out.join("\n");
  window.last = last;
  return window;
}

function footer(window: Window, label: string): string {
  if (window.capped && window.more) {
    return `\n\n(Output capped at ${fmt(READ_MAX_CHARS)} characters after line ${window.last}. Call read_file with offset=${window.last + 1} to read on.)`;
  }
  if (window.more) {
    return `\n\n(Showing lines ${window.first}-${window.last} of ${label}. More lines follow: call read_file with offset=${window.last + 1} to continue.)`;
  }
  return `\n\n(End of ${label}: ${fmt(window.totalLines ?? window.last)} lines.)`;
}

async function pdfLines(handle: FileHandle): Promise<string[]> {
  const { PDFParse } = await import("pdf-parse");
  const parser = new PDFParse({ data: await handle.readFile() });
  try {
    const result = await parser.getText();
    return result.text.split(/\r?\n/);
  } finally {
    await parser.destroy();
  }
}

export function createReadFileTool(guard: WorkspaceGuard): Tool {
  return defineTool({
    name: "read_file",
    description:
      `Read a text file and return its lines prefixed with line numbers ("12| text"). Returns at most ` +
      `${fmt(READ_DEFAULT_LIMIT)} lines (set offset/limit to page through large files) and at most ` +
      `${fmt(READ_MAX_CHARS)} characters; the footer says how to read on. PDFs are returned as extracted ` +
      `text. Binary files are refused. Use grep to find the right offset in big files.`,
    schema,
    readOnly: true,
    async run(args, ctx, signal) {
      // The file is opened once and everything below reads that descriptor (checked to lie
      // inside the workspace), never the path again.
      const opened = await guard.openRead(args.path, ctx);
      if (!opened.ok) return errorResult(opened.error);
      const { handle, stats: info } = opened;
      let window: Window;
      let label = "the file";
      try {
        if (info.isDirectory()) return errorResult(`Error: ${args.path} is a directory. Use list_dir to see its contents.`);
        if (!info.isFile()) return errorResult(`Error: ${args.path} is not a regular file (a device, FIFO or socket); read_file reads files only.`);
        const offset = args.offset ?? 1;
        const limit = args.limit ?? READ_DEFAULT_LIMIT;
        const sample = await sniffHandle(handle);
        if (isPdf(sample)) {
          if (info.size > PDF_MAX_BYTES) return errorResult(`Error: ${args.path} is a PDF of ${fmt(info.size)} bytes, too large to extract here.`);
          try {
            window = await collect(await pdfLines(handle), offset, limit);
          } catch (error) {
            return errorResult(`Error: could not extract text from PDF ${args.path}: ${(error as Error).message}`);
          }
          label = "the PDF's extracted text";
        } else if (looksBinary(sample)) {
          return errorResult(
            `Error: ${args.path} is a binary file (${fmt(info.size)} bytes); read_file only reads text. ` +
              `Use exec with a suitable tool (e.g. file, xxd, unzip -l) to inspect it.`,
          );
        } else {
          const stream = createReadStream("", { fd: handle, start: 0, autoClose: false, encoding: "utf8", signal });
          const rl = createInterface({ input: stream, crlfDelay: Infinity });
          try {
            window = await collect(rl, offset, limit);
          } finally {
            rl.close();
            stream.destroy();
          }
        }
      } finally {
        await handle.close();
      }
      const offset = args.offset ?? 1;
      if (window.totalLines === 0) return `(${args.path} is empty)`;
      if (window.last < window.first) {
        return errorResult(`Error: offset ${offset} is past the end of ${args.path} (${fmt(window.totalLines ?? 0)} lines).`);
      }
      return window.text + footer(window, label);
    },
  });
}
