import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/core/errors.js";
import { createBuiltinTools } from "../../src/tools/builtin/index.js";
import { createSearchAdapter, type WebSearchConfig } from "../../src/tools/builtin/web-search/index.js";
import { byName, ctxFor, runTool } from "./helpers.js";

interface Seen {
  method: string;
  url: URL;
  headers: IncomingMessage["headers"];
  body: string;
}

let server: Server;
let base: string;
let seen: Seen[];
let reply: (req: Seen, res: ServerResponse) => void;

beforeEach(async () => {
  seen = [];
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      const entry = { method: req.method ?? "", url: new URL(req.url ?? "/", "http://x"), headers: req.headers, body };
      seen.push(entry);
      reply(entry, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const json = (res: ServerResponse, data: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(data));

async function search(config: WebSearchConfig, args: Record<string, unknown>) {
  const tool = byName(createBuiltinTools({ workspace: "/tmp", web: { search: { ...config, baseUrl: config.baseUrl ?? base } } }), "web_search");
  return runTool(tool, args, ctxFor("/tmp"));
}

const EXPECTED = 'Results for "nanobot":\n\n1. First\n   https://one.example/\n   first snippet\n2. Second\n   https://two.example/\n   second snippet';

describe("web_search adapters against loopback fakes", () => {
  it("Brave: GET /res/v1/web/search with the subscription token", async () => {
    reply = (_req, res) =>
      json(res, { web: { results: [{ title: "First", url: "https://one.example/", description: "first snippet" }, { title: "Second", url: "https://two.example/", description: "second snippet" }] } });
    const result = await search({ provider: "brave", apiKey: "brave-key" }, { query: "nanobot", count: 2 });
    expect(result.text).toBe(EXPECTED);
    expect(seen[0]?.url.pathname).toBe("/res/v1/web/search");
    expect(seen[0]?.url.searchParams.get("q")).toBe("nanobot");
    expect(seen[0]?.url.searchParams.get("count")).toBe("2");
    expect(seen[0]?.headers["x-subscription-token"]).toBe("brave-key");
  });

  it("Tavily: POST /search with a bearer key and max_results", async () => {
    reply = (_req, res) => json(res, { results: [{ title: "First", url: "https://one.example/", content: "first snippet" }, { title: "Second", url: "https://two.example/", content: "second snippet" }] });
    const result = await search({ provider: "tavily", apiKey: "tvly-key" }, { query: "nanobot", count: 2 });
    expect(result.text).toBe(EXPECTED);
    expect(seen[0]).toMatchObject({ method: "POST" });
    expect(seen[0]?.url.pathname).toBe("/search");
    expect(seen[0]?.headers.authorization).toBe("Bearer tvly-key");
    expect(JSON.parse(seen[0]?.body ?? "{}")).toEqual({ query: "nanobot", max_results: 2 });
  });

  it("SearXNG: GET /search?format=json, trimmed to count", async () => {
    reply = (_req, res) =>
      json(res, {
        results: [
          { title: "First", url: "https://one.example/", content: "first snippet" },
          { title: "Second", url: "https://two.example/", content: "second snippet" },
          { title: "Third", url: "https://three.example/", content: "third" },
        ],
      });
    const result = await search({ provider: "searxng" }, { query: "nanobot", count: 2 });
    expect(result.text).toBe(EXPECTED);
    expect(seen[0]?.url.searchParams.get("format")).toBe("json");
  });

  it("Jina: GET /?q= asking for JSON", async () => {
    reply = (_req, res) => json(res, { data: [{ title: "First", url: "https://one.example/", description: "first snippet" }, { title: "Second", url: "https://two.example/", content: "second snippet" }] });
    const result = await search({ provider: "jina", apiKey: "jina-key" }, { query: "nanobot", count: 2 });
    expect(result.text).toBe(EXPECTED);
    expect(seen[0]?.url.searchParams.get("q")).toBe("nanobot");
    expect(seen[0]?.headers.accept).toBe("application/json");
    expect(seen[0]?.headers.authorization).toBe("Bearer jina-key");
  });

  it("DuckDuckGo HTML (the keyless default): POST /html/ and scrape results, skipping ads", async () => {
    reply = (_req, res) =>
      res.writeHead(200, { "content-type": "text/html" }).end(`<html><body>
        <div class="result result--ad"><a class="result__a" href="https://ads.example/">Ad</a></div>
        <div class="result"><h2><a class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fone.example%2F&rut=x">First</a></h2>
          <a class="result__snippet">first   snippet</a></div>
        <div class="result"><a class="result__a" href="https://two.example/">Second</a><div class="result__snippet">second snippet</div></div>
        <div class="result"><a class="result__a" href="https://three.example/">Third</a></div>
      </body></html>`);
    const result = await search({}, { query: "nanobot", count: 2 });
    expect(result.text).toBe(EXPECTED);
    expect(seen[0]?.method).toBe("POST");
    expect(seen[0]?.url.pathname).toBe("/html/");
    expect(new URLSearchParams(seen[0]?.body).get("q")).toBe("nanobot");
  });
});

describe("web_search behaviour", () => {
  it("defaults to 5 results and validates count 1-10", async () => {
    reply = (_req, res) => json(res, { results: Array.from({ length: 8 }, (_, i) => ({ title: `T${i}`, url: `https://r${i}.example/`, content: "" })) });
    const result = await search({ provider: "searxng" }, { query: "many" });
    expect(result.text.match(/^\d+\. /gm)).toHaveLength(5);
    for (const count of [0, 11]) expect((await search({ provider: "searxng" }, { query: "x", count })).text).toMatch(/^Invalid arguments for web_search:\n- count: /);
  });

  it("reports provider errors and empty results", async () => {
    reply = (_req, res) => res.writeHead(401, { "content-type": "application/json" }).end('{"error":"bad key"}');
    const failed = await search({ provider: "brave", apiKey: "wrong" }, { query: "x" });
    expect(failed).toMatchObject({ isError: true, text: 'Error: web search failed: Brave search failed: HTTP 401 {"error":"bad key"}' });
    reply = (_req, res) => json(res, { results: [] });
    expect((await search({ provider: "searxng" }, { query: "nothing" })).text).toBe('No results for "nothing".');
  });

  it("checks provider settings at configuration time", () => {
    expect(() => createSearchAdapter({ provider: "brave" })).toThrow(ConfigError);
    expect(() => createSearchAdapter({ provider: "tavily" })).toThrow(/API key/);
    expect(() => createSearchAdapter({ provider: "searxng" })).toThrow(/instance URL/);
    expect(() => createSearchAdapter({ provider: "bing" })).toThrow(/Unknown web search provider "bing"/);
    expect(typeof createSearchAdapter({})).toBe("function");
  });
});
