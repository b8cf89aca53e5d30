/**
 * `/mcp` over Streamable HTTP with the SDK's web-standard transport, so any `Request →
 * Response` host (Hono, a bare node server, tests) can mount it. One transport and one SDK
 * server per MCP session (`Mcp-Session-Id`); the session id also names the nanobot session
 * (`mcp:<id>`) the conversation lives in. Host/Origin are checked before anything is parsed.
 */
import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { errorMessage } from "../../core/errors.js";
import { chatProfile } from "./chat-profile.js";
import type { McpLogFn, McpServerDeps } from "./chat-profile.js";
import { ProgressBoard } from "./chat-progress.js";
import { rejectedHost } from "../host-check.js";
import type { HostPolicy } from "../host-check.js";
import { MemoryEventStore } from "./event-store.js";
import type { EventStoreLimits } from "./event-store.js";
import { buildMcpServer } from "./server-profile.js";
import type { ServerProfile } from "./server-profile.js";

export interface McpHttpOptions extends HostPolicy {
  /** Sessions idle this long are closed when a new one starts (default 1 hour). */
  sessionIdleMs?: number;
  /** Upper bound on open sessions; the least recently used is closed beyond it (default 1000). */
  maxSessions?: number;
  /** Bounds of each session's event store (resumable SSE with `Last-Event-ID`). */
  eventStore?: EventStoreLimits;
  /** Milliseconds a client should wait before reconnecting a closed stream (SSE `retry:`, default 1000). */
  retryIntervalMs?: number;
  log?: McpLogFn;
}

export type McpHttpDeps = McpServerDeps & McpHttpOptions;

/** A `Request → Response` handler with a way to close every open session on shutdown. */
export interface McpHttpHandler {
  (request: Request): Promise<Response>;
  close(): Promise<void>;
  /** Open MCP sessions (for status pages and tests). */
  sessionCount(): number;
}

interface OpenSession {
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  lastSeen: number;
}

const DEFAULT_IDLE_MS = 60 * 60 * 1000;
const DEFAULT_MAX_SESSIONS = 1000;
const DEFAULT_RETRY_INTERVAL_MS = 1000;

/** The handler the gateway mounts at `/mcp`: nanobot's published agents as tools. */
export function createMcpHttpHandler(deps: McpHttpDeps): McpHttpHandler {
  const board = new ProgressBoard();
  const profile = chatProfile(deps, board);
  return createProfileHttpHandler(() => profile, deps);
}

/** Serves any profile over Streamable HTTP (the chat profile, or a test profile built on it). */
export function createProfileHttpHandler(profileFor: () => ServerProfile, options: McpHttpOptions = {}): McpHttpHandler {
  const sessions = new Map<string, OpenSession>();
  const idleMs = options.sessionIdleMs ?? DEFAULT_IDLE_MS;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const log = options.log;

  const closeSession = async (id: string): Promise<void> => {
    const open = sessions.get(id);
    if (!open) return;
    sessions.delete(id);
    await open.server.close().catch((err: unknown) => log?.("debug", "MCP session close failed", { id, error: errorMessage(err) }));
  };

  const evict = async (now: number): Promise<void> => {
    const byAge = [...sessions.entries()].sort((a, b) => a[1].lastSeen - b[1].lastSeen);
    const excess = Math.max(0, byAge.length - maxSessions + 1);
    const stale = byAge.filter(([, s], i) => i < excess || now - s.lastSeen > idleMs).map(([id]) => id);
    await Promise.all(stale.map((id) => closeSession(id)));
  };

  const handler = async (request: Request): Promise<Response> => {
    const refused = rejectedHost(request.headers, options);
    if (refused) {
      log?.("warn", `MCP request refused: ${refused}`);
      return jsonRpcError(403, `Forbidden: ${refused}`);
    }
    const now = Date.now();
    const sessionId = request.headers.get("mcp-session-id");
    if (sessionId) {
      const open = sessions.get(sessionId);
      if (!open) return jsonRpcError(404, "Session not found", -32001);
      open.lastSeen = now;
      return open.transport.handleRequest(request);
    }
    if (request.method !== "POST") return jsonRpcError(400, "Bad Request: Mcp-Session-Id header is required");
    await evict(now);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      // Resumable streams: what a dropped SSE stream missed is replayed after Last-Event-ID.
      eventStore: new MemoryEventStore(options.eventStore),
      retryInterval: options.retryIntervalMs ?? DEFAULT_RETRY_INTERVAL_MS,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, lastSeen: now });
        log?.("debug", "MCP session started", { id });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    // A tool's `closeStream` ends its own request's SSE stream on this transport.
    const server = buildMcpServer(profileFor(), { closeRequestStream: (id) => transport.closeSSEStream(id) });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    const response = await transport.handleRequest(request);
    // Not an initialize request: the transport refused it, nothing stays open.
    if (!transport.sessionId) await server.close();
    return response;
  };

  return Object.assign(handler, {
    async close(): Promise<void> {
      await Promise.all([...sessions.keys()].map((id) => closeSession(id)));
    },
    sessionCount: () => sessions.size,
  });
}

/** A JSON-RPC error response with an HTTP status, the way the SDK's transport answers. */
export function jsonRpcError(status: number, message: string, code = -32000): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json" },
  });
}
