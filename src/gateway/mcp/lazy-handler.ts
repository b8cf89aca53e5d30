/**
 * `/mcp` loaded on its first request. The handler's module pulls in the MCP SDK's server and its
 * schemas (~19 MiB of RSS and ~8 MiB of heap in a fresh process), which a gateway that nobody
 * reaches over MCP never needs.
 */
import type { McpHttpDeps, McpHttpHandler } from "./http-handler.js";

export function lazyMcpHttpHandler(deps: McpHttpDeps): McpHttpHandler {
  let created: Promise<McpHttpHandler> | undefined;
  let handler: McpHttpHandler | undefined;
  const load = (): Promise<McpHttpHandler> =>
    (created ??= import("./http-handler.js").then(({ createMcpHttpHandler }) => (handler = createMcpHttpHandler(deps))));
  const serve = async (request: Request): Promise<Response> => (await load())(request);
  return Object.assign(serve, {
    async close(): Promise<void> {
      if (created) await (await created).close();
    },
    sessionCount: () => handler?.sessionCount() ?? 0,
  });
}
