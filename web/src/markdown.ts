/**
 * Markdown to safe HTML: raw HTML from the model is shown as text, links only to http(s) and
 * mailto, and code blocks get a small keyword/string/comment highlighter (no dependency).
 */
import { Marked } from "marked";

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

const KEYWORDS = new Set(
  "as async await break case catch class const continue def default do elif else enum export extends false fn for from func function if import in interface let match new nil None null package pub return self static struct switch this throw true try type var while with yield".split(" "),
);

/** Wraps comments, strings, numbers and keywords in spans; everything else is escaped text. */
export function highlight(code: string): string {
  const token = /(\/\/[^\n]*|#[^\n]*|\/\*[\s\S]*?\*\/)|("(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`)|\b(\d+(?:\.\d+)?)\b|\b([A-Za-z_]\w*)\b/g;
  let out = "";
  let last = 0;
  for (const m of code.matchAll(token)) {
    const at = m.index;
    out += escapeHtml(code.slice(last, at));
    const [text, comment, str, num, word] = m;
    if (comment) out += `<span class="hl-comment">${escapeHtml(text)}</span>`;
    else if (str) out += `<span class="hl-string">${escapeHtml(text)}</span>`;
    else if (num) out += `<span class="hl-number">${escapeHtml(text)}</span>`;
    else if (word && KEYWORDS.has(word)) out += `<span class="hl-keyword">${escapeHtml(text)}</span>`;
    else out += escapeHtml(text);
    last = at + text.length;
  }
  return out + escapeHtml(code.slice(last));
}

const marked = new Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html: ({ text }) => escapeHtml(text),
    code: ({ text, lang }) => {
      const label = lang ? `<span class="lang">${escapeHtml(lang)}</span>` : "";
      return `<pre class="code">${label}<code>${highlight(text)}</code></pre>`;
    },
    link: ({ href, text }) => {
      const safe = /^(https?:|mailto:)/i.test(href) ? escapeHtml(href) : "#";
      return `<a href="${safe}" target="_blank" rel="noopener noreferrer">${escapeHtml(text)}</a>`;
    },
    image: ({ href, text }) => (/^https?:/i.test(href) ? `<img src="${escapeHtml(href)}" alt="${escapeHtml(text)}">` : escapeHtml(text)),
  },
});

export function renderMarkdown(text: string): string {
  return marked.parse(text, { async: false });
}
