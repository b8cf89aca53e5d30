/**
 * Transport selection against real loopback servers built from the SDK's server classes:
 * `type` wins; a URL path ending in `/sse` is SSE; any other URL is Streamable HTTP, falling
 * back to SSE when the server answers the first POST with a 4xx.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { resolveConfig } from "../../src/config/index.js";
import { McpClientManager } from "../../src/mcp/manager.js";
import type { McpServersConfig } from "../../src/mcp/types.js";
import { textOfOutput } from "./helpers.js";

/** An SDK McpServer with one tool that names the transport it was reached over. */
function sdkServer(kind: string): McpServer {
  const server = new McpServer({ name: `${kind}-server`, version: "1.0.0" });
  server.registerTool("where", { description: "Names the transport." }, () => ({ content: [{ type: "text", text: `over ${kind}` }] }));
  return server;
}

interface Loopback {
  base: string;
  /** Request lines the server saw, `METHOD /path` (query left out). */
  seen: string[];
  close(): Promise<void>;
}

async function serve(route: (req: IncomingMessage, res: ServerResponse) => void | Promise<void>): Promise<Loopback> {
  const seen: string[] = [];
  const http: HttpServer = createServer((req, res) => {
    seen.push(`${req.method} ${(req.url ?? "").split("?")[0]}`);
    void Promise.resolve(route(req, res)).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/** A Streamable HTTP server (stateless, one SDK server per request) at `path`. */
function streamableAt(path: string): Promise<Loopback> {
  return serve(async (req, res) => {
    if (req.url?.split("?")[0] !== path || req.method !== "POST") return void res.writeHead(405).end();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = sdkServer("streamable-http");
    res.on("close", () => void server.close());
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
}

/** An old HTTP+SSE server: GET `path` opens the stream, POST /messages carries requests; POST `path` is 405. */
function sseAt(path: string): Promise<Loopback> {
  const transports = new Map<string, SSEServerTransport>();
  return serve(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname === path && req.method === "GET") {
      const transport = new SSEServerTransport("/messages", res);
      transports.set(transport.sessionId, transport);
      await sdkServer("sse").connect(transport);
      return;
    }
    if (url.pathname === "/messages" && req.method === "POST") {
      const transport = transports.get(url.searchParams.get("sessionId") ?? "");
      if (!transport) return void res.writeHead(404).end();
      return transport.handlePostMessage(req, res);
    }
    res.writeHead(405).end();
  });
}

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function connect(servers: McpServersConfig): Promise<McpClientManager> {
  const manager = await McpClientManager.connect(servers, { connectTimeoutMs: 5000 });
  open.push(manager);
  return manager;
}

async function callWhere(manager: McpClientManager, server: string): Promise<string> {
  return textOfOutput(await manager.callTool(server, "where", {}));
}

describe("transport selection", () => {
  it("a URL that is not /sse speaks Streamable HTTP", async () => {
    const srv = await streamableAt("/mcp");
    open.push(srv);
    const manager = await connect({ remote: { url: `${srv.base}/mcp` } });
    expect(manager.failures()).toEqual([]);
    expect(manager.connection("remote")?.transportType).toBe("http");
    expect(await callWhere(manager, "remote")).toBe("over streamable-http");
  });

  it("a URL path ending in /sse speaks SSE without trying Streamable HTTP", async () => {
    const srv = await sseAt("/sse");
    open.push(srv);
    const manager = await connect({ legacy: { url: `${srv.base}/sse` } });
    expect(manager.failures()).toEqual([]);
    expect(manager.connection("legacy")?.transportType).toBe("sse");
    expect(await callWhere(manager, "legacy")).toBe("over sse");
    expect(srv.seen).not.toContain("POST /sse");
  });

  it("an SSE-only server at another path is reached by falling back from Streamable HTTP on a 4xx", async () => {
    const srv = await sseAt("/events");
    open.push(srv);
    const manager = await connect({ legacy: { url: `${srv.base}/events` } });
    expect(manager.failures()).toEqual([]);
    expect(manager.connection("legacy")?.transportType).toBe("sse");
    expect(await callWhere(manager, "legacy")).toBe("over sse");
    // The first try was a Streamable HTTP POST, refused with 405; then the SSE GET.
    expect(srv.seen.slice(0, 2)).toEqual(["POST /events", "GET /events"]);
  });

  it("`type` wins: type http on an SSE-only server does not fall back", async () => {
    const srv = await sseAt("/events");
    open.push(srv);
    const manager = await connect({ forced: { url: `${srv.base}/events`, type: "http" } });
    expect(manager.failures().map((f) => f.server)).toEqual(["forced"]);
    expect(manager.failures()[0]?.reason).toContain("HTTP 405");
    expect(srv.seen).not.toContain("GET /events");
  });

  it("`type` wins: type sse on a /mcp URL speaks SSE", async () => {
    const srv = await sseAt("/mcp");
    open.push(srv);
    const manager = await connect({ forced: { url: `${srv.base}/mcp`, type: "sse" } });
    expect(manager.connection("forced")?.transportType).toBe("sse");
    expect(srv.seen).not.toContain("POST /mcp");
  });

  it("a 401 is about credentials: no SSE fallback", async () => {
    const srv = await serve((_req, res) => void res.writeHead(401).end());
    open.push(srv);
    const manager = await connect({ locked: { url: `${srv.base}/mcp` } });
    expect(manager.failures().map((f) => f.server)).toEqual(["locked"]);
    // No SSE stream was opened on the URL (OAuth discovery may read /.well-known/… documents).
    expect(srv.seen.filter((l) => l.startsWith("GET") && !l.startsWith("GET /.well-known/"))).toEqual([]);
    expect(manager.failures()[0]?.reason).not.toContain("SSE");
  });

  it("the config leaves a URL's transport open (no type: http forced before the /sse rule)", () => {
    const { config } = resolveConfig(
      { mcpServers: { a: { url: "http://h/sse" }, b: { url: "http://h/mcp" }, c: { command: "x" }, d: { url: "http://h/mcp", type: "streamable-http" } } },
      { file: "nanobot.json", env: { HOME: "/tmp" }, cwd: "/tmp" },
    );
    expect(config.mcpServers.a?.type).toBeUndefined();
    expect(config.mcpServers.b?.type).toBeUndefined();
    expect(config.mcpServers.c?.type).toBe("stdio");
    expect(config.mcpServers.d?.type).toBe("http");
  });
});
