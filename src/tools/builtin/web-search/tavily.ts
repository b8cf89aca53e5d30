/** Tavily: POST /search with a bearer key and a JSON body. */
import { ensureOk, joinUrl, str, type SearchAdapter, type SearchAdapterOptions } from "./types.js";

export function tavilyAdapter(options: SearchAdapterOptions): SearchAdapter {
  const base = options.baseUrl ?? "https://api.tavily.com";
  return async ({ query, count, signal }) => {
    const response = await ensureOk(
      await options.fetch(joinUrl(base, "/search"), {
        method: "POST",
        signal,
        headers: { "content-type": "application/json", authorization: `Bearer ${options.apiKey ?? ""}` },
        body: JSON.stringify({ query, max_results: count }),
      }),
      "Tavily",
    );
    const data = (await response.json()) as { results?: Array<Record<string, unknown>> };
    return (data.results ?? []).map((r) => ({ title: str(r.title), url: str(r.url), snippet: str(r.content) }));
  };
}
