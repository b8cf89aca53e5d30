/**
 * Turns a web page into what a model wants to read: the main article (Readability on a
 * linkedom DOM) as markdown (turndown) or plain text. Pages Readability cannot make sense of
 * fall back to the whole body without scripts, styles and navigation.
 */
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";

export type ExtractMode = "markdown" | "text";

export interface Extracted {
  title?: string;
  content: string;
  extractor: "readability" | "body";
}

const NOISE = "script, style, noscript, template, iframe, svg, nav, footer, header, form";

function tidy(text: string): string {
  return text
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function toMarkdown(html: string): string {
  const service = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  service.remove(["script", "style", "noscript"]);
  return tidy(service.turndown(html));
}

interface MinimalElement {
  remove(): void;
  innerHTML: string;
  textContent: string | null;
}

interface MinimalDocument {
  title?: string;
  body?: MinimalElement | null;
  querySelectorAll(selector: string): Iterable<MinimalElement>;
}

export function extractHtml(html: string, mode: ExtractMode): Extracted {
  const { document } = parseHTML(html) as unknown as { document: MinimalDocument };
  let article: ReturnType<Readability["parse"]> = null;
  try {
    // Readability mutates the DOM it is given, so it gets its own copy.
    const { document: copy } = parseHTML(html) as unknown as { document: ConstructorParameters<typeof Readability>[0] };
    article = new Readability(copy, { charThreshold: 200 }).parse();
  } catch {
    article = null;
  }
  const title = (article?.title ?? document.title ?? "").trim() || undefined;
  if (article?.content && (article.textContent ?? "").trim().length > 0) {
    const content = mode === "markdown" ? toMarkdown(article.content) : tidy(article.textContent ?? "");
    return { content, extractor: "readability", ...(title ? { title } : {}) };
  }
  for (const node of document.querySelectorAll(NOISE)) node.remove();
  const body = document.body;
  const content = body ? (mode === "markdown" ? toMarkdown(body.innerHTML) : tidy(body.textContent ?? "")) : tidy(html);
  return { content, extractor: "body", ...(title ? { title } : {}) };
}
