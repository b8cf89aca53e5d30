/**
 * The Python nanobot's session line format (`sessions/<key>.jsonl`): a metadata line, then one
 * OpenAI-style message per line. What that format cannot express (reasoning signatures,
 * `isError`, message meta, usage, …) rides in a `_nanobot` object on the line, which the
 * Python side keeps untouched; keys we do not know are kept and written back as they were.
 */
import { messageId } from "../core/index.js";
import type {
  AssistantContentPart,
  ContentPart,
  Message,
  MessageMeta,
  ReasoningPart,
  ToolCallPart,
  UserContentPart,
} from "../core/index.js";

export interface PyMetadataLine {
  _type: "metadata";
  key: string;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  last_consolidated: number;
}

export interface PyToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type PyContentPart = Record<string, unknown> & { type: string };

export interface PyMessageLine {
  role: Message["role"];
  content: string | PyContentPart[] | null;
  timestamp?: string;
  tool_calls?: PyToolCall[];
  tool_call_id?: string;
  name?: string;
  reasoning_content?: string;
  thinking_blocks?: Array<Record<string, unknown>>;
  _nanobot?: NanobotExtras;
  [extra: string]: unknown;
}

/** Fields of a core message the Python shape cannot carry. */
interface NanobotExtras {
  content?: ContentPart[];
  meta?: MessageMeta;
  isError?: boolean;
  provider?: string;
  model?: string;
  usage?: unknown;
  finishReason?: string;
}

/** Meta keys the importer uses to remember Python-side details for a faithful re-export. */
const PY_TIMESTAMP = "_pyTimestamp";
const PY_EXTRA = "_pyExtra";
const KNOWN_KEYS = new Set([
  "role",
  "content",
  "timestamp",
  "tool_calls",
  "tool_call_id",
  "name",
  "reasoning_content",
  "thinking_blocks",
  "_nanobot",
]);

export function isoTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

// ── core → Python ───────────────────────────────────────────────────────────────────────────

export function messageToPy(message: Message): PyMessageLine {
  const meta = { ...message.meta };
  const rawTimestamp = typeof meta[PY_TIMESTAMP] === "string" ? (meta[PY_TIMESTAMP] as string) : undefined;
  const extra = isRecord(meta[PY_EXTRA]) ? meta[PY_EXTRA] : {};
  delete meta[PY_TIMESTAMP];
  delete meta[PY_EXTRA];

  const line: PyMessageLine = { role: message.role, content: null };
  line.timestamp = rawTimestamp ?? isoTimestamp(message.createdAt ?? 0);
  const extras: NanobotExtras = {};
  switch (message.role) {
    case "system":
    case "user":
    case "tool":
      line.content = contentToPy(message.content);
      break;
    case "assistant": {
      const text = message.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
      const calls = message.content.filter((p): p is ToolCallPart => p.type === "toolCall");
      const reasoning = message.content.filter((p): p is ReasoningPart => p.type === "reasoning");
      line.content = text || calls.length === 0 ? text : null;
      if (calls.length) {
        line.tool_calls = calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.rawArguments } }));
      }
      if (reasoning.length) line.reasoning_content = reasoning.map((r) => r.text).join("");
      if (reasoning.some((r) => r.signature !== undefined || r.redacted)) line.thinking_blocks = reasoning.map(thinkingBlock);
      if (message.provider !== undefined) extras.provider = message.provider;
      if (message.model !== undefined) extras.model = message.model;
      if (message.usage !== undefined) extras.usage = message.usage;
      if (message.finishReason !== undefined) extras.finishReason = message.finishReason;
      break;
    }
  }
  if (message.role === "tool") {
    line.tool_call_id = message.toolCallId;
    line.name = message.toolName;
    if (message.isError) extras.isError = true;
  }
  Object.assign(line, extra);
  if (Object.keys(meta).length) extras.meta = meta;
  // Lossy content (several text parts, signatures, image mime types, …) is kept verbatim.
  const back = pyToMessage({ ...line, _nanobot: undefined });
  if (JSON.stringify(back.content) !== JSON.stringify(message.content)) extras.content = message.content;
  if (Object.keys(extras).length) line._nanobot = extras;
  return line;
}

function contentToPy(parts: readonly ContentPart[]): string | PyContentPart[] {
  if (parts.every((p) => p.type === "text")) {
    if (parts.length === 1) return (parts[0] as { text: string }).text;
    if (parts.length === 0) return "";
  }
  return parts.map(partToPy);
}

function partToPy(part: ContentPart): PyContentPart {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text };
    case "image":
      return { type: "image_url", image_url: { url: part.url ?? `data:${part.mimeType};base64,${part.data ?? ""}` } };
    case "file":
      return {
        type: "file",
        file: {
          ...(part.name !== undefined ? { filename: part.name } : {}),
          ...(part.data !== undefined ? { file_data: `data:${part.mimeType};base64,${part.data}` } : {}),
          ...(part.url !== undefined ? { file_url: part.url } : {}),
          ...(part.path !== undefined ? { path: part.path } : {}),
        },
      };
    default:
      return { ...part };
  }
}

function thinkingBlock(part: ReasoningPart): Record<string, unknown> {
  if (part.redacted) return { type: "redacted_thinking", data: part.signature ?? part.text };
  return { type: "thinking", thinking: part.text, ...(part.signature !== undefined ? { signature: part.signature } : {}) };
}

// ── Python → core ───────────────────────────────────────────────────────────────────────────

/** One Python line as a core message with a fresh id. Unknown keys survive in meta. */
export function pyToMessage(line: PyMessageLine): Message {
  const extras = line._nanobot ?? {};
  const meta: MessageMeta = { ...extras.meta };
  const createdAt = parseTimestamp(line.timestamp);
  if (line.timestamp !== undefined && isoTimestamp(createdAt) !== line.timestamp) meta[PY_TIMESTAMP] = line.timestamp;
  const unknown = Object.fromEntries(Object.entries(line).filter(([k]) => !KNOWN_KEYS.has(k)));
  if (Object.keys(unknown).length) meta[PY_EXTRA] = unknown;
  const base = { id: messageId(), createdAt, ...(Object.keys(meta).length ? { meta } : {}) };

  switch (line.role) {
    case "system":
      return { ...base, role: "system", content: (extras.content ?? textParts(line.content)) as Extract<Message, { role: "system" }>["content"] };
    case "user":
      return { ...base, role: "user", content: (extras.content ?? partsFromPy(line.content)) as UserContentPart[] };
    case "tool":
      return {
        ...base,
        role: "tool",
        toolCallId: line.tool_call_id ?? "",
        toolName: line.name ?? "",
        content: (extras.content ?? partsFromPy(line.content)) as Extract<Message, { role: "tool" }>["content"],
        isError: extras.isError ?? false,
      };
    case "assistant": {
      const content = (extras.content as AssistantContentPart[] | undefined) ?? assistantPartsFromPy(line);
      const message: Extract<Message, { role: "assistant" }> = { ...base, role: "assistant", content };
      if (extras.provider !== undefined) message.provider = extras.provider;
      if (extras.model !== undefined) message.model = extras.model;
      if (extras.usage !== undefined) message.usage = extras.usage as NonNullable<typeof message.usage>;
      if (extras.finishReason !== undefined) message.finishReason = extras.finishReason as NonNullable<typeof message.finishReason>;
      return message;
    }
    default:
      throw new Error(`unknown message role ${JSON.stringify((line as { role: unknown }).role)}`);
  }
}

function assistantPartsFromPy(line: PyMessageLine): AssistantContentPart[] {
  const parts: AssistantContentPart[] = [];
  if (line.thinking_blocks?.length) {
    for (const block of line.thinking_blocks) {
      if (block["type"] === "redacted_thinking") {
        parts.push({ type: "reasoning", text: "", redacted: true, signature: String(block["data"] ?? "") });
      } else {
        const part: ReasoningPart = { type: "reasoning", text: String(block["thinking"] ?? "") };
        if (typeof block["signature"] === "string") part.signature = block["signature"];
        parts.push(part);
      }
    }
  } else if (line.reasoning_content) {
    parts.push({ type: "reasoning", text: line.reasoning_content });
  }
  const text = typeof line.content === "string" ? line.content : textOfPy(line.content);
  if (text) parts.push({ type: "text", text });
  for (const call of line.tool_calls ?? []) parts.push(toolCallFromPy(call));
  return parts;
}

function toolCallFromPy(call: PyToolCall): ToolCallPart {
  const raw = typeof call.function.arguments === "string" ? call.function.arguments : JSON.stringify(call.function.arguments ?? {});
  const part: ToolCallPart = { type: "toolCall", id: call.id, name: call.function.name, arguments: {}, rawArguments: raw };
  if (raw.trim() === "") return part;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (isRecord(parsed)) part.arguments = parsed;
    else part.parseError = "tool arguments are not a JSON object";
  } catch (error) {
    part.parseError = error instanceof Error ? error.message : String(error);
  }
  return part;
}

function partsFromPy(content: PyMessageLine["content"]): ContentPart[] {
  if (content === null || content === undefined) return [];
  if (typeof content === "string") return [{ type: "text", text: content }];
  return content.map(partFromPy);
}

function partFromPy(part: PyContentPart): ContentPart {
  if (part.type === "text") return { type: "text", text: String(part["text"] ?? "") };
  if (part.type === "image_url") {
    const raw = part["image_url"];
    const url = String(isRecord(raw) ? raw["url"] : raw ?? "");
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
    if (data) return { type: "image", mimeType: data[1]!, data: data[2]! };
    return { type: "image", mimeType: guessImageMime(url), url };
  }
  if (part.type === "file" && isRecord(part["file"])) {
    const file = part["file"];
    const data = typeof file["file_data"] === "string" ? /^data:([^;,]+);base64,(.*)$/s.exec(file["file_data"]) : null;
    return {
      type: "file",
      mimeType: data?.[1] ?? "application/octet-stream",
      ...(typeof file["filename"] === "string" ? { name: file["filename"] } : {}),
      ...(data ? { data: data[2]! } : {}),
      ...(typeof file["file_url"] === "string" ? { url: file["file_url"] } : {}),
      ...(typeof file["path"] === "string" ? { path: file["path"] } : {}),
    };
  }
  return part as unknown as ContentPart;
}

function textParts(content: PyMessageLine["content"]): ContentPart[] {
  const text = typeof content === "string" ? content : textOfPy(content);
  return [{ type: "text", text }];
}

function textOfPy(content: PyContentPart[] | null | undefined): string {
  return (content ?? []).flatMap((p) => (p.type === "text" ? [String(p["text"] ?? "")] : [])).join("");
}

function guessImageMime(url: string): string {
  const ext = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase();
  if (ext === "jpg" || ext === "jpeg") return "image/jpeg";
  if (ext === "gif" || ext === "webp" || ext === "png") return `image/${ext}`;
  return "image/png";
}

/** Python writes naive local ISO timestamps (`2026-02-19T10:15:30.123456`); JS parses them as local. */
export function parseTimestamp(value: string | undefined): number {
  if (!value) return 0;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? 0 : ms;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export const PY_META_KEYS = { timestamp: PY_TIMESTAMP, extra: PY_EXTRA } as const;
