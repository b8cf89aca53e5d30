/**
 * Oversized tool output (Go seed §6.4): above 50 KiB the full output is written, owner-only
 * (0600, in a 0700 directory), to `<outputDir>/truncated-outputs/<tool>-<callId>.txt` (`.json`
 * when it has non-text parts) and the result keeps the text's head up to the same 50 KiB
 * (less the pointer line) plus the path, as the Go nanobot does. Images are not counted:
 * their cost is their pixel size, which truncating text cannot change.
 */
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { ToolResultContentPart } from "../../core/messages.js";

export const MAX_TOOL_OUTPUT_BYTES = 51_200;

function outputBytes(content: readonly ToolResultContentPart[]): number {
  let bytes = 0;
  for (const p of content) {
    if (p.type === "text") bytes += Buffer.byteLength(p.text, "utf8");
    else if (p.type !== "image") bytes += Buffer.byteLength(JSON.stringify(p), "utf8");
  }
  return bytes;
}

function safeName(value: string): string {
  return value.replace(/[^A-Za-z0-9_.-]/g, "_");
}

export interface TruncationResult {
  content: ToolResultContentPart[];
  /** Where the full output was saved, when it was. */
  path?: string;
}

/** Whether `truncateLargeOutput` would cut this output (callers skip its async call otherwise). */
export function exceedsOutputLimit(content: ToolResultContentPart[]): boolean {
  return outputBytes(content) > MAX_TOOL_OUTPUT_BYTES;
}

export async function truncateLargeOutput(
  content: ToolResultContentPart[],
  options: { toolName: string; callId: string; outputDir?: string },
): Promise<TruncationResult> {
  const bytes = outputBytes(content);
  if (bytes <= MAX_TOOL_OUTPUT_BYTES) return { content };

  const textOnly = content.every((p) => p.type === "text");
  const text = content.map((p) => (p.type === "text" ? p.text : "")).join("");
  let path: string | undefined;
  if (options.outputDir) {
    const ext = textOnly ? "txt" : "json";
    path = join(options.outputDir, "truncated-outputs", `${safeName(options.toolName)}-${safeName(options.callId)}.${ext}`);
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    // The output may hold secrets the tool read; only the owner may read the copy.
    await writeFile(path, textOnly ? text : JSON.stringify(content, null, 2), { encoding: "utf8", mode: 0o600 });
    await chmod(path, 0o600);
  }
  const where = path
    ? `The full output is saved at ${path}; read it with read_file (use an offset) if you need the rest.`
    : "The rest was discarded.";
  const note = (shown: number): string => `\n\n[Output truncated: ${bytes} bytes in total, showing the first ${shown} bytes. ${where}]`;
  // The head fills the budget left after the note (its digits are bounded by the total's).
  const head = headWithinBytes(text, MAX_TOOL_OUTPUT_BYTES - Buffer.byteLength(note(bytes), "utf8"));
  const images = content.filter((p) => p.type === "image");
  return { content: [{ type: "text", text: head + note(Buffer.byteLength(head, "utf8")) }, ...images], path };
}

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes, never splitting a character. */
function headWithinBytes(text: string, maxBytes: number): string {
  if (maxBytes <= 0) return "";
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back over continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}
