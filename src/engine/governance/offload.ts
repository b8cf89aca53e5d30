/**
 * Large tool results stay in the persisted history but not in the request: the copy carries a
 * 1,200-character preview and the path of a file holding the full text. `read_file` is exempt
 * (offloading a file read into another file would send the model in circles), and so is a
 * result its tool asked to keep whole (the Go nanobot's skip-truncation `_meta`).
 */
import { join } from "node:path";
import type { Message, ToolMessage } from "../../core/messages.js";

export const OFFLOAD_PREVIEW_CHARS = 1_200;
const EXEMPT_TOOLS: ReadonlySet<string> = new Set(["read_file"]);

/** A file the caller must write for an offloaded result (governance itself does no I/O). */
export interface PendingWrite {
  path: string;
  content: string;
}

function resultText(message: ToolMessage): string {
  let out = "";
  for (const p of message.content) if (p.type === "text") out += p.text;
  return out;
}

function safeName(value: string): string {
  return value.replace(/[^A-Za-z0-9_.-]/g, "_");
}

export function offloadPath(outputDir: string, message: ToolMessage): string {
  return join(outputDir, "tool-results", `${safeName(message.toolName)}-${safeName(message.toolCallId)}.txt`);
}

export function offloadLargeResults(
  messages: readonly Message[],
  maxChars: number,
  outputDir: string | undefined,
  writes: PendingWrite[],
): { messages: readonly Message[]; offloaded: number } {
  let offloaded = 0;
  let out: Message[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Message;
    const fixed = m.role === "tool" && !EXEMPT_TOOLS.has(m.toolName) && m.meta?.skipTruncation !== true ? offloadOne(m, maxChars, outputDir, writes) : m;
    if (fixed !== m) {
      offloaded++;
      out ??= messages.slice(0, i);
    }
    out?.push(fixed);
  }
  return { messages: out ?? messages, offloaded };
}

function textLength(message: ToolMessage): number {
  let n = 0;
  for (const p of message.content) if (p.type === "text") n += p.text.length;
  return n;
}

function offloadOne(m: ToolMessage, maxChars: number, outputDir: string | undefined, writes: PendingWrite[]): ToolMessage {
  if (textLength(m) <= maxChars) return m;
  const text = resultText(m);
  const preview = text.slice(0, OFFLOAD_PREVIEW_CHARS);
  let note: string;
  const full = typeof m.meta?.truncatedOutputPath === "string" ? m.meta.truncatedOutputPath : undefined;
  if (full) {
    // Already cut at 50 KiB with the whole output on disk: point there, write nothing new.
    note = `[Result truncated: the full output is saved at ${full}; read it with read_file if you need more.]`;
  } else if (outputDir) {
    const path = offloadPath(outputDir, m);
    writes.push({ path, content: text });
    note = `[Result truncated: ${text.length} characters in total. The full result is saved at ${path}; read it with read_file if you need more.]`;
  } else {
    note = `[Result truncated: ${text.length} characters in total; only the first ${OFFLOAD_PREVIEW_CHARS} are shown.]`;
  }
  const others = m.content.filter((p) => p.type !== "text");
  return { ...m, content: [{ type: "text", text: `${preview}\n…\n${note}` }, ...others] };
}
