/**
 * Model markdown → Telegram's HTML parse mode (b, i, s, code, pre, a, blockquote). Telegram
 * has no headings or lists, so headings become bold lines and bullets become "•". Anything the
 * converter cannot pair up stays literal text; if Telegram still rejects the result, the
 * sender falls back to plain text.
 */

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/;
const SAFE_URL = /^(https?:\/\/|tg:\/\/|mailto:)/i;

export function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeAttr(text: string): string {
  return escapeHtml(text).replace(/"/g, "&quot;");
}

export function markdownToTelegramHtml(markdown: string): string {
  const lines = markdown.replace(/\uE000/g, "").split("\n");
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = FENCE_OPEN.exec(line);
    if (fence) {
      const marker = fence[1]!;
      const closing = new RegExp(`^ {0,3}${marker[0] === "`" ? "`" : "~"}{${marker.length},}\\s*$`);
      const body: string[] = [];
      for (i++; i < lines.length && !closing.test(lines[i]!); i++) body.push(lines[i]!);
      const code = escapeHtml(body.join("\n"));
      const lang = fence[2];
      out.push(lang ? `<pre><code class="language-${escapeAttr(lang)}">${code}</code></pre>` : `<pre>${code}</pre>`);
      continue;
    }
    if (/^ {0,3}>/.test(line)) {
      const quoted: string[] = [];
      for (; i < lines.length && /^ {0,3}>/.test(lines[i]!); i++) quoted.push(lines[i]!.replace(/^ {0,3}> ?/, ""));
      i--;
      out.push(`<blockquote>${quoted.map(inline).join("\n")}</blockquote>`);
      continue;
    }
    const heading = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      out.push(`<b>${inline(heading[1]!)}</b>`);
      continue;
    }
    const bullet = /^(\s*)[-*+]\s+(.*)$/.exec(line);
    if (bullet && !/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
      out.push(`${bullet[1]!}• ${inline(bullet[2]!)}`);
      continue;
    }
    out.push(inline(line));
  }
  return out.join("\n");
}

/**
 * Inline spans of one line: code and links are rendered first and held behind private-use
 * placeholders so emphasis and escaping never touch their insides.
 */
function inline(text: string): string {
  const held: string[] = [];
  const hold = (html: string): string => `\uE000${held.push(html) - 1}\uE000`;
  let s = text.replace(/`([^`\n]+)`/g, (_m, code: string) => hold(`<code>${escapeHtml(code)}</code>`));
  s = s.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (match, label: string, url: string) =>
    SAFE_URL.test(url) ? hold(`<a href="${escapeAttr(url)}">${emphasis(escapeHtml(label))}</a>`) : match,
  );
  s = emphasis(escapeHtml(s));
  return s.replace(/\uE000(\d+)\uE000/g, (_m, index: string) => held[Number(index)] ?? "");
}

function emphasis(s: string): string {
  return s
    .replace(/\*\*(?=\S)(.+?)(?<=\S)\*\*/g, "<b>$1</b>")
    .replace(/(^|[^\w])__(?=\S)(.+?)(?<=\S)__(?!\w)/g, "$1<b>$2</b>")
    .replace(/~~(?=\S)(.+?)(?<=\S)~~/g, "<s>$1</s>")
    .replace(/(^|[^\w*])\*(?=[^\s*])([^*]*?)(?<=[^\s*])\*(?![\w*])/g, "$1<i>$2</i>")
    .replace(/(^|[^\w])_(?=[^\s_])([^_]*?)(?<=[^\s_])_(?!\w)/g, "$1<i>$2</i>");
}
