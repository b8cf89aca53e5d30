/**
 * DuckDuckGo's HTML endpoint: the keyless default. Results are scraped from the page
 * (`.result__a` links, `.result__snippet` text); links arrive wrapped in a `/l/?uddg=` redirect.
 */
import { ensureOk, joinUrl, type SearchAdapter, type SearchAdapterOptions, type SearchResult } from "./types.js";

interface Node {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): Node | null;
  classList: { contains(name: string): boolean };
}

function unwrap(href: string): string {
  try {
    const url = new URL(href, "https://duckduckgo.com");
    const target = url.searchParams.get("uddg");
    return target ?? url.toString();
  } catch {
    return href;
  }
}

export async function parseDuckDuckGoHtml(html: string, count: number): Promise<SearchResult[]> {
  // The DOM library is loaded on first search, not at start-up.
  const { parseHTML } = await import("linkedom");
  const { document } = parseHTML(html) as unknown as { document: { querySelectorAll(s: string): Iterable<Node> } };
  const results: SearchResult[] = [];
  for (const node of document.querySelectorAll(".result")) {
    if (node.classList.contains("result--ad")) continue;
    const link = node.querySelector("a.result__a");
    const href = link?.getAttribute("href");
    if (!link || !href) continue;
    const snippet = node.querySelector(".result__snippet")?.textContent ?? "";
    results.push({ title: (link.textContent ?? "").trim(), url: unwrap(href), snippet: snippet.replace(/\s+/g, " ").trim() });
    if (results.length >= count) break;
  }
  return results;
}

export function duckDuckGoAdapter(options: SearchAdapterOptions): SearchAdapter {
  const base = options.baseUrl ?? "https://html.duckduckgo.com";
  return async ({ query, count, signal }) => {
    const response = await ensureOk(
      await options.fetch(joinUrl(base, "/html/"), {
        method: "POST",
        signal,
        headers: { "content-type": "application/x-www-form-urlencoded", "user-agent": "Mozilla/5.0 (compatible; nanobot)" },
        body: new URLSearchParams({ q: query }).toString(),
      }),
      "DuckDuckGo",
    );
    return await parseDuckDuckGoHtml(await response.text(), count);
  };
}
