/** SearXNG (self-hosted): GET /search?format=json. The instance URL is required. */
import { ensureOk, joinUrl, str, type SearchAdapter, type SearchAdapterOptions } from "./types.js";

export function searxngAdapter(options: SearchAdapterOptions & { baseUrl: string }): SearchAdapter {
  return async ({ query, count, signal }) => {
    const url = joinUrl(options.baseUrl, "/search");
    url.searchParams.set("q", query);
    url.searchParams.set("format", "json");
    const headers: Record<string, string> = { accept: "application/json" };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    const response = await ensureOk(await options.fetch(url, { signal, headers }), "SearXNG");
    const data = (await response.json()) as { results?: Array<Record<string, unknown>> };
    return (data.results ?? []).slice(0, count).map((r) => ({ title: str(r.title), url: str(r.url), snippet: str(r.content) }));
  };
}
