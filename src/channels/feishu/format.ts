/**
 * How a reply is shaped for Feishu, as the Python nanobot chooses: short plain text as a `text`
 * message, text with links (or medium plain text) as a rich-text `post`, and anything with
 * markdown the other two cannot show (code blocks, tables, headings, emphasis, lists) or longer
 * than a post as an `interactive` card with a markdown element. Streamed previews are always
 * cards: only cards can be updated after they are sent.
 */

/** Characters per message: cards are capped at 30 KB of JSON, so 4000 (even of CJK) fits. */
export const FEISHU_TEXT_LIMIT = 4000;

const TEXT_MAX = 200;
const POST_MAX = 2000;
const COMPLEX_MD = /```|^\s*\|.+\|\s*$|^#{1,6}\s+/m;
const SIMPLE_MD = /\*\*.+?\*\*|__.+?__|(?<!\*)\*(?!\*)(.+?)(?<!\*)\*(?!\*)|~~.+?~~/s;
const LIST = /^\s*(?:[-*+]|\d+\.)\s+/m;
const LINK = /\[([^\]]+)\]\((https?:\/\/[^)]+)\)/g;

export type FeishuMsgType = "text" | "post" | "interactive";

export interface FeishuContent {
  msgType: FeishuMsgType;
  /** The `content` field: a JSON string, as the API wants it. */
  content: string;
}

export function detectFormat(text: string): FeishuMsgType {
  const stripped = text.trim();
  if (COMPLEX_MD.test(stripped) || stripped.length > POST_MAX || SIMPLE_MD.test(stripped) || LIST.test(stripped)) return "interactive";
  if (new RegExp(LINK.source).test(stripped)) return "post";
  return stripped.length <= TEXT_MAX ? "text" : "post";
}

/** A card whose one markdown element shows `text`; `update_multi` lets the bot update it later. */
export function cardContent(text: string): string {
  return JSON.stringify({ config: { wide_screen_mode: true, update_multi: true }, elements: [{ tag: "markdown", content: text }] });
}

/** A post with one paragraph per line; `[label](url)` becomes a link element. */
export function postContent(text: string): string {
  const rows = text
    .trim()
    .split("\n")
    .map((line) => {
      const row: Array<Record<string, string>> = [];
      let last = 0;
      for (const match of line.matchAll(LINK)) {
        if (match.index > last) row.push({ tag: "text", text: line.slice(last, match.index) });
        row.push({ tag: "a", text: match[1]!, href: match[2]! });
        last = match.index + match[0].length;
      }
      if (last < line.length || row.length === 0) row.push({ tag: "text", text: line.slice(last) });
      return row;
    });
  return JSON.stringify({ zh_cn: { content: rows } });
}

export function formatReply(text: string): FeishuContent {
  const msgType = detectFormat(text);
  if (msgType === "text") return { msgType, content: JSON.stringify({ text: text.trim() }) };
  if (msgType === "post") return { msgType, content: postContent(text) };
  return { msgType, content: cardContent(text) };
}
