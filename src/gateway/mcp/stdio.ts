/**
 * nanobot as an MCP server on stdio (`nanobot serve-mcp`). stdout carries only JSON-RPC, so
 * nothing else may write there: callers log to stderr or a file. The whole process is one MCP
 * session, talking in the nanobot session `mcp:stdio`.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Readable, Writable } from "node:stream";
import { chatProfile } from "./chat-profile.js";
import type { McpServerDeps } from "./chat-profile.js";
import { ProgressBoard } from "./chat-progress.js";
import { buildMcpServer } from "./server-profile.js";

export interface StdioServeOptions {
  /** Defaults to `process.stdin` / `process.stdout`. */
  stdin?: Readable;
  stdout?: Writable;
}

export interface StdioServerHandle {
  server: Server;
  /** Resolves when the client hangs up (stdin ends) or `close()` is called. */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function serveMcpStdio(deps: McpServerDeps, options: StdioServeOptions = {}): Promise<StdioServerHandle> {
  const stdin = options.stdin ?? process.stdin;
  const server = buildMcpServer(chatProfile(deps, new ProgressBoard()));
  const transport = new StdioServerTransport(stdin, options.stdout ?? process.stdout);
  let resolveClosed: () => void = () => undefined;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  server.onclose = () => resolveClosed();
  const close = async (): Promise<void> => {
    stdin.off("end", onEnd);
    await server.close();
    resolveClosed();
  };
  // The SDK transport does not notice the client hanging up; end of input ends the session.
  const onEnd = (): void => {
    close().catch((err: unknown) => deps.log?.("debug", "closing the stdio MCP server failed", { error: String(err) }));
  };
  stdin.once("end", onEnd);
  await server.connect(transport);
  return { server, closed, close };
}
