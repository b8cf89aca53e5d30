/**
 * Oversized tool output (Go seed §6.4): above 50 KiB the full output is written to
 * `<outputDir>/truncated-outputs/<tool>-<callId>.txt` (`.json` when it has non-text parts) and
 * the result keeps a head of the text plus the path. Images are not counted: their cost is
 * their pixel size, which truncating text cannot change.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { ToolResultContentPart } from "../../core/messages.js";

export const MAX_TOOL_OUTPUT_BYTES = 51_200;
/** The head kept in the result; below the 16,000-character offload limit on purpose. */
export const TRUNCATED_HEAD_CHARS = 10_000;

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
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, textOnly ? text : JSON.stringify(content, null, 2), "utf8");
  }
  const where = path
    ? `The full output is saved at ${path}; read it with read_file (use an offset) if you need the rest.`
    : "The rest was discarded.";
  const note = `\n\n[Output truncated: ${bytes} bytes in total, showing the first ${TRUNCATED_HEAD_CHARS} characters. ${where}]`;
  const images = content.filter((p) => p.type === "image");
  return { content: [{ type: "text", text: text.slice(0, TRUNCATED_HEAD_CHARS) + note }, ...images], path };
}
