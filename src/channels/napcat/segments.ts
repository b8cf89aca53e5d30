/**
 * OneBot v11 messages: an array of segments (`{type, data}`), or a string with CQ codes
 * (`[CQ:at,qq=123]`, NapCat's `messagePostFormat: "string"`). Both are read into segments; the
 * channel always sends arrays.
 */

export interface Segment {
  type: string;
  data: Record<string, unknown>;
}

/** What one inbound message says, once its segments are read. */
export interface ParsedMessage {
  text: string;
  /** Images, files, voice and video to fetch. */
  downloads: Segment[];
  mentionsBot: boolean;
  /** The message id a reply segment quotes. */
  replyTo?: string;
}

const CQ_CODE = /\[CQ:([a-zA-Z_]+)((?:,[^,\]]*)*)\]/g;

function unescapeCQ(text: string, inParam: boolean): string {
  const out = text.replace(/&#91;/g, "[").replace(/&#93;/g, "]");
  return (inParam ? out.replace(/&#44;/g, ",") : out).replace(/&amp;/g, "&");
}

/** Splits a CQ-code string into segments; the text between codes becomes text segments. */
export function parseCQString(message: string): Segment[] {
  const out: Segment[] = [];
  let last = 0;
  for (const match of message.matchAll(CQ_CODE)) {
    if (match.index > last) out.push({ type: "text", data: { text: unescapeCQ(message.slice(last, match.index), false) } });
    const data: Record<string, unknown> = {};
    for (const pair of (match[2] ?? "").split(",").slice(1)) {
      const eq = pair.indexOf("=");
      if (eq > 0) data[pair.slice(0, eq)] = unescapeCQ(pair.slice(eq + 1), true);
    }
    out.push({ type: match[1]!, data });
    last = match.index + match[0].length;
  }
  if (last < message.length) out.push({ type: "text", data: { text: unescapeCQ(message.slice(last), false) } });
  return out;
}

/** The event's `message` as segments, whichever format NapCat posts. */
export function normalizeSegments(message: unknown): Segment[] {
  if (typeof message === "string") return parseCQString(message);
  if (!Array.isArray(message)) return [];
  return message
    .filter((s): s is { type: unknown; data?: unknown } => typeof s === "object" && s !== null)
    .filter((s) => typeof s.type === "string")
    .map((s) => ({ type: s.type as string, data: typeof s.data === "object" && s.data !== null ? (s.data as Record<string, unknown>) : {} }));
}

const DOWNLOADABLE = new Set(["image", "file", "record", "video"]);

export function parseSegments(segments: Segment[], selfId: string | undefined): ParsedMessage {
  const parts: string[] = [];
  const downloads: Segment[] = [];
  let mentionsBot = false;
  let replyTo: string | undefined;
  for (const segment of segments) {
    const { type, data } = segment;
    if (type === "text") {
      if (typeof data.text === "string") parts.push(data.text);
    } else if (type === "at") {
      const qq = String(data.qq ?? "");
      if (selfId !== undefined && qq === selfId) mentionsBot = true;
      else parts.push(qq === "all" ? "@all" : `@${typeof data.name === "string" && data.name ? data.name : qq}`);
    } else if (type === "reply") {
      if (data.id !== undefined && data.id !== null && String(data.id)) replyTo = String(data.id);
    } else if (type === "face") {
      parts.push(`[face:${String(data.id ?? "")}]`);
    } else if (DOWNLOADABLE.has(type)) {
      downloads.push(segment);
    }
  }
  const text = parts
    .map((p) => p.trim())
    .filter((p) => p.length > 0)
    .join(" ");
  return { text, downloads, mentionsBot, ...(replyTo ? { replyTo } : {}) };
}

export function textSegment(text: string): Segment {
  return { type: "text", data: { text } };
}

export function replySegment(messageId: string): Segment {
  return { type: "reply", data: { id: messageId } };
}
