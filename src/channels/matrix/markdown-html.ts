/**
 * Model markdown → Matrix's `org.matrix.custom.html` formatted body (marked, GitHub flavour).
 * Raw HTML in the model's text is shown as text, never passed through; links keep only the
 * schemes Matrix clients open safely, images only `mxc://` sources (clients refuse others).
 * Plain text (one paragraph without markup) gets no formatted body, as the Python nanobot.
 */
import { Marked } from "marked";

const SAFE_LINK = /^(https?:|matrix:|mailto:)/i;

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

const marked = new Marked({
  gfm: true,
  breaks: false,
  renderer: {
    html({ text }) {
      return escapeHtml(text);
    },
    link({ href, title, tokens }) {
      const label = this.parser.parseInline(tokens);
      if (!SAFE_LINK.test(href)) return label;
      const titled = title ? ` title="${escapeHtml(title)}"` : "";
      return `<a href="${escapeHtml(href)}"${titled}>${label}</a>`;
    },
    image({ href, title, text }) {
      if (!href.toLowerCase().startsWith("mxc://")) return escapeHtml(text);
      const titled = title ? ` title="${escapeHtml(title)}"` : "";
      return `<img src="${escapeHtml(href)}" alt="${escapeHtml(text)}"${titled}>`;
    },
  },
});

/** The formatted body for `markdown`, or undefined when plain text says it all. */
export function markdownToMatrixHtml(markdown: string): string | undefined {
  let html: string;
  try {
    html = marked.parse(markdown, { async: false }).trim();
  } catch {
    return undefined;
  }
  if (!html) return undefined;
  const single = /^<p>([\s\S]*)<\/p>$/.exec(html);
  if (single && !/[<>]/.test(single[1]!) && !single[1]!.includes("&")) return undefined;
  return html;
}
