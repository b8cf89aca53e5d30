/**
 * Text as the WeChat client renders it: outside code, a bare `<`/`>` hides what follows (so
 * they become full-width), image links and `~~` show as noise, and `#####` headings are not
 * headings. Long replies are split at WeChat's 1800 characters with code blocks kept whole.
 */
import { splitMessage } from "../delivery/split-message.js";

export const WEIXIN_TEXT_LIMIT = 1800;

const CODE = /(```[\s\S]*?```|`[^`\n]*`)/;

export function sanitizeWeixinText(text: string): string {
  return text
    .split(CODE)
    .map((part, i) => {
      if (i % 2 === 1) return part;
      return part
        .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
        .replaceAll("<", "＜")
        .replaceAll(">", "＞")
        .replaceAll("~~", "")
        .replace(/^#{5,6}\s+/gm, "");
    })
    .join("");
}

export function splitWeixinText(text: string, limit = WEIXIN_TEXT_LIMIT): string[] {
  return splitMessage(sanitizeWeixinText(text).trim(), limit);
}
