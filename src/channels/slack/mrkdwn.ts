/**
 * Markdown (what models write) → Slack mrkdwn: `**bold**` → `*bold*`, `*italic*` → `_italic_`,
 * `~~strike~~` → `~strike~`, `[text](url)` → `<url|text>`, headings → bold lines, tables → one
 * "**Header**: cell · …" line per row (as the Python nanobot), and `&`, `<`, `>` escaped as
 * Slack requires. Code (fenced and inline) is kept as written.
 */

const FENCE = /```[\s\S]*?```/g;
const INLINE_CODE = /`[^`\n]+`/g;
const TABLE = /(?:^|\n)(\|.*\|)\n(\|[ \t:|-]*\|)((?:\n\|.*\|)*)/g;

/** Stashes pieces that must pass through untouched and puts them back at the end. */
class Stash {
  private readonly items: string[] = [];
  put(text: string): string {
    this.items.push(text);
    return `\uE000${this.items.length - 1}\uE000`;
  }
  restore(text: string): string {
    // Twice: a stashed link label may contain stashed code.
    let out = text;
    for (let i = 0; i < 2; i++) out = out.replace(/\uE000(\d+)\uE000/g, (_m, n: string) => this.items[Number(n)] ?? "");
    return out;
  }
}

function escapeText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function tableToLines(header: string, body: string): string {
  const cells = (line: string): string[] => line.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
  const heads = cells(header);
  const rows = body.split("\n").filter((l) => l.trim());
  return rows
    .map((row) => {
      const values = cells(row);
      return heads.map((h, i) => (values[i] ? `**${h}**: ${values[i]}` : "")).filter(Boolean).join(" · ");
    })
    .filter(Boolean)
    .join("\n");
}

export function toMrkdwn(markdown: string): string {
  if (!markdown) return "";
  const stash = new Stash();
  let text = markdown.replace(FENCE, (block) => stash.put(block.replace(/^```[^\n]*\n/, "```\n")));
  text = text.replace(TABLE, (_m, header: string, _sep: string, body: string) => `\n${tableToLines(header, body)}`);
  text = text.replace(INLINE_CODE, (code) => stash.put(code));
  text = escapeText(text);
  // Links before emphasis: a URL may contain `_` or `*`.
  text = text.replace(/\[([^\]\n]+)\]\((https?:\/\/[^)\s]+)\)/g, (_m, label: string, url: string) => stash.put(`<${url.replace(/&amp;/g, "&")}|${label}>`));
  text = text.replace(/(^|[\s(])(https?:\/\/[^\s<>]+)/g, (_m, lead: string, url: string) => `${lead}${stash.put(url.replace(/&amp;/g, "&"))}`);
  text = text.replace(/^#{1,6}\s+(.+?)\s*#*\s*$/gm, (_m, title: string) => stash.put(`*${title.replace(/\*\*/g, "")}*`));
  text = text.replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, (_m, _d: string, inner: string) => `\uE001${inner}\uE001`);
  text = text.replace(/(^|[^\w*])\*(?=\S)([^*\n]*?\S)\*(?!\w)/g, (_m, lead: string, inner: string) => `${lead}_${inner}_`);
  text = text.replace(/~~(?=\S)([\s\S]*?\S)~~/g, "~$1~");
  text = text.replace(/^(\s*)[-*+]\s+/gm, "$1• ");
  text = text.replace(/\uE001/g, "*");
  return stash.restore(text).replace(/\n+$/, "");
}
