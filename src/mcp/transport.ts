/**
 * Builds the SDK transport for one server spec. `type` wins; else stdio for a command; else SSE
 * when the URL path ends in `/sse`; else Streamable HTTP, falling back to SSE when the server
 * answers the first POST with a 4xx (the SDK's recommended backwards compatibility).
 */
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ConfigError } from "../core/errors.js";
import { activeTraceparent } from "../core/tracing/tracer.js";
import { BoundedStdioClientTransport } from "./stdio-transport.js";
import { detectTransportType, expandVars } from "./server-spec.js";
import type { McpServerSpec, McpTransportType } from "./types.js";

function expandMap(map: Record<string, string> | undefined, env: Record<string, string | undefined>): Record<string, string> | undefined {
  if (!map) return undefined;
  return Object.fromEntries(Object.entries(map).map(([k, v]) => [k, expandVars(v, env)]));
}

export interface BuiltTransport {
  transport: Transport;
  type: McpTransportType;
  /** Last lines a stdio server wrote to stderr, for failure reasons. */
  stderrTail(): string;
}

const STDERR_TAIL_CHARS = 2000;

/**
 * True when a connect error means "this URL speaks the old HTTP+SSE transport": the spec left
 * the transport to us, we tried Streamable HTTP, and the server said 4xx (400, 404, 405…).
 * 401 and 403 are about credentials, not the transport, so they are not retried as SSE.
 */
export function shouldFallBackToSse(spec: McpServerSpec, tried: McpTransportType, err: unknown): boolean {
  if (spec.type || tried !== "http") return false;
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (e instanceof StreamableHTTPError && typeof code === "number") return code >= 400 && code < 500 && code !== 401 && code !== 403;
  }
  return false;
}

export function createTransport(
  server: string,
  spec: McpServerSpec,
  env: Record<string, string | undefined>,
  type: McpTransportType = detectTransportType(spec),
  authProvider?: OAuthClientProvider,
  /** Watches responses for the provider (403 `insufficient_scope`). */
  authFetch?: (input: string | URL, init?: RequestInit) => Promise<Response>,
): BuiltTransport {
  if (type === "stdio") {
    if (!spec.command) throw new ConfigError(`MCP server '${server}' has no command`, { path: `mcpServers.${server}.command`, expected: "a command to spawn" });
    // Ours, not the SDK's: one oversized reply fails its call instead of the connection.
    const transport = new BoundedStdioClientTransport({
      command: expandVars(spec.command, env),
      args: (spec.args ?? []).map((a) => expandVars(a, env)),
      env: expandMap(spec.env, env),
      cwd: spec.cwd ? expandVars(spec.cwd, env) : undefined,
    });
    let tail = "";
    transport.stderr.on("data", (chunk: Buffer | string) => {
      tail = (tail + chunk.toString()).slice(-STDERR_TAIL_CHARS);
    });
    return { transport, type, stderrTail: () => tail.trim() };
  }
  if (!spec.url) throw new ConfigError(`MCP server '${server}' has no url`, { path: `mcpServers.${server}.url`, expected: "an http(s) URL" });
  let url: URL;
  try {
    url = new URL(expandVars(spec.url, env));
  } catch (err) {
    throw new ConfigError(`MCP server '${server}' has an invalid url`, { path: `mcpServers.${server}.url`, expected: "an http(s) URL", cause: err });
  }
  const headers = expandMap(spec.headers, env);
  const requestInit: RequestInit | undefined = headers ? { headers } : undefined;
  const fetch = tracingFetch(authProvider ? authFetch : undefined);
  const opts = { ...(requestInit ? { requestInit } : {}), ...(authProvider ? { authProvider } : {}), fetch };
  const transport = type === "sse" ? new SSEClientTransport(url, opts) : new StreamableHTTPClientTransport(url, opts);
  return { transport, type, stderrTail: () => "" };
}

type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** `fetch` that sends the active span's `traceparent` (W3C Trace Context) when tracing is on. */
export function tracingFetch(inner?: FetchLike): FetchLike {
  const send: FetchLike = inner ?? ((input, init) => globalThis.fetch(input, init));
  return (input, init) => {
    const traceparent = activeTraceparent();
    if (!traceparent) return send(input, init);
    const headers = new Headers(init?.headers);
    headers.set("traceparent", traceparent);
    return send(input, { ...init, headers });
  };
}
