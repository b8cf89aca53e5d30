/** Jina Search (s.jina.ai): GET /?q= with Accept: application/json; the key is optional. */
import { ensureOk, joinUrl, str, type SearchAdapter, type SearchAdapterOptions } from "./types.js";

export function jinaAdapter(options: SearchAdapterOptions): SearchAdapter {
  const base = options.baseUrl ?? "https://s.jina.ai";
  return async ({ query, count, signal }) => {
    const url = joinUrl(base, "/");
    url.searchParams.set("q", query);
    const headers: Record<string, string> = { accept: "application/json", "x-respond-with": "no-content" };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    const response = await ensureOk(await options.fetch(url, { signal, headers }), "Jina");
    const data = (await response.json()) as { data?: Array<Record<string, unknown>> };
    return (data.data ?? []).slice(0, count).map((r) => ({ title: str(r.title), url: str(r.url), snippet: str(r.description) || str(r.content) }));
  };
}
