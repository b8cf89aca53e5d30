/** web_search: one tool, several providers behind small adapters; DuckDuckGo needs no key. */
import { z } from "zod";
import { ConfigError } from "../../../core/errors.js";
import type { Tool } from "../../tool.js";
import { defineTool, errorResult } from "../define-tool.js";
import { braveAdapter } from "./brave.js";
import { duckDuckGoAdapter } from "./duckduckgo.js";
import { jinaAdapter } from "./jina.js";
import { searxngAdapter } from "./searxng.js";
import { tavilyAdapter } from "./tavily.js";
import type { SearchAdapter, SearchProviderName, SearchResult } from "./types.js";

/** `tools.web.search.timeout`'s default: 30 s, as in the Python nanobot. */
export const SEARCH_TIMEOUT_MS = 30_000;

export interface WebSearchConfig {
  provider?: SearchProviderName | (string & {});
  apiKey?: string;
  baseUrl?: string;
  /** `tools.web.search.maxResults`: results when the model does not ask for a count (default 5). */
  maxResults?: number;
  /** `tools.web.search.timeout`: seconds before a search gives up (default 30, as in Python). */
  timeout?: number;
}

export function createSearchAdapter(config: WebSearchConfig, fetchImpl: typeof fetch = fetch): SearchAdapter {
  const provider = config.provider ?? "duckduckgo";
  const common = { fetch: fetchImpl, ...(config.apiKey ? { apiKey: config.apiKey } : {}), ...(config.baseUrl ? { baseUrl: config.baseUrl } : {}) };
  const needKey = (name: string): void => {
    if (!config.apiKey) throw new ConfigError(`${name} search needs an API key`, { path: "tools.web.search.apiKey", expected: "a non-empty string" });
  };
  switch (provider) {
    case "brave":
      needKey("Brave");
      return braveAdapter(common);
    case "tavily":
      needKey("Tavily");
      return tavilyAdapter(common);
    case "searxng":
      if (!config.baseUrl) throw new ConfigError("SearXNG search needs the instance URL", { path: "tools.web.search.baseUrl", expected: "a URL such as http://localhost:8888" });
      return searxngAdapter({ ...common, baseUrl: config.baseUrl });
    case "jina":
      return jinaAdapter(common);
    case "duckduckgo":
      return duckDuckGoAdapter(common);
    default:
      throw new ConfigError(`Unknown web search provider ${JSON.stringify(provider)}`, {
        path: "tools.web.search.provider",
        expected: "brave, tavily, searxng, jina or duckduckgo",
      });
  }
}

export function formatResults(query: string, results: readonly SearchResult[]): string {
  if (results.length === 0) return `No results for "${query}".`;
  const lines = [`Results for "${query}":`, ""];
  results.forEach((r, i) => {
    lines.push(`${i + 1}. ${r.title || "(untitled)"}`, `   ${r.url}`);
    if (r.snippet) lines.push(`   ${r.snippet}`);
  });
  return lines.join("\n");
}

const schema = z.object({
  query: z.string().trim().min(1).describe("What to search for."),
  count: z.number().int().min(1).max(10).optional().describe("Number of results, 1-10 (default 5)."),
});

export function createWebSearchTool(config: WebSearchConfig, fetchImpl: typeof fetch = fetch, timeoutMs = SEARCH_TIMEOUT_MS): Tool {
  const adapter = createSearchAdapter(config, fetchImpl);
  const defaultCount = Math.min(Math.max(Math.trunc(config.maxResults ?? 5), 1), 10);
  return defineTool({
    name: "web_search",
    description:
      `Search the web. Returns up to \`count\` results (1-10, default ${defaultCount}), each with title, URL and snippet. ` +
      "Use web_fetch on a result URL to read the page.",
    schema,
    readOnly: true,
    async run(args, _ctx, signal) {
      const count = args.count ?? defaultCount;
      try {
        const results = await adapter({ query: args.query, count, signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) });
        return formatResults(args.query, results.slice(0, count));
      } catch (error) {
        return errorResult(`Error: web search failed: ${(error as Error).message}`);
      }
    },
  });
}
