/** The shape every web search adapter shares: a query in, ranked results out. */

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface SearchRequest {
  query: string;
  count: number;
  signal: AbortSignal;
}

export type SearchProviderName = "brave" | "tavily" | "searxng" | "jina" | "duckduckgo";

export interface SearchAdapterOptions {
  apiKey?: string;
  /** Base URL of the API (tests point it at a loopback fake; SearXNG needs it). */
  baseUrl?: string;
  fetch: typeof fetch;
}

export type SearchAdapter = (request: SearchRequest) => Promise<SearchResult[]>;

/** Fails with the status and the start of the body so the model (and the user) see why. */
export async function ensureOk(response: Response, provider: string): Promise<Response> {
  if (response.ok) return response;
  const body = (await response.text().catch(() => "")).slice(0, 300);
  throw new Error(`${provider} search failed: HTTP ${response.status}${body ? ` ${body}` : ""}`);
}

export function joinUrl(base: string, path: string): URL {
  return new URL(path.replace(/^\//, ""), base.endsWith("/") ? base : `${base}/`);
}

export function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}
