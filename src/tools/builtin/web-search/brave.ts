/** Brave Search API: GET /res/v1/web/search with the X-Subscription-Token header. */
import { ensureOk, joinUrl, str, type SearchAdapter, type SearchAdapterOptions } from "./types.js";

export function braveAdapter(options: SearchAdapterOptions): SearchAdapter {
  const base = options.baseUrl ?? "https://api.search.brave.com";
  return async ({ query, count, signal }) => {
    const url = joinUrl(base, "/res/v1/web/search");
    url.searchParams.set("q", query);
    url.searchParams.set("count", String(count));
    const response = await ensureOk(
      await options.fetch(url, { signal, headers: { accept: "application/json", "x-subscription-token": options.apiKey ?? "" } }),
      "Brave",
    );
    const data = (await response.json()) as { web?: { results?: Array<Record<string, unknown>> } };
    return (data.web?.results ?? []).map((r) => ({ title: str(r.title), url: str(r.url), snippet: str(r.description) }));
  };
}
