/**
 * What a Go config re-exports from its own MCP servers when nanobot serves MCP:
 * `publish.mcpServers` (everything a server offers), `publish.tools` (`server`, `server/tool`,
 * `server/tool:alias`), `publish.prompts`, `publish.resources`, `publish.resourceTemplates`,
 * and `server/tool` entries of `publish.entrypoint` (the older Go form, e.g. the research bot's
 * `manager/research`). Calls pass through to the server unchanged; listings are read each time
 * from the connection, so a server's `list_changed` shows up at the next `tools/list`.
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { NanobotConfig } from "../../config/index.js";
import type { McpClientManager } from "../../mcp/manager.js";
import { parseToolRef } from "../../mcp/names.js";
import type { ProfileExtras, ServedPrompt, ServedResource, ServedResourceTemplate, ServedTool } from "./server-profile.js";

export type PublishedExtras = ProfileExtras;

const CALL_TIMEOUT_MS = 10 * 60 * 1000;

/** Whether the config publishes anything from its MCP servers (then the manager is needed). */
export function publishesServerItems(config: NanobotConfig): boolean {
  const p = config.publish;
  const lists = [p.mcpServers, p.tools, p.prompts, p.resources, p.resourceTemplates, entrypointToolRefs(config)];
  return lists.some((l) => (l?.length ?? 0) > 0);
}

/** `server/tool` entries of `publish.entrypoint` that name no agent. */
function entrypointToolRefs(config: NanobotConfig): string[] {
  return (config.publish.entrypoint ?? []).filter((e) => e.includes("/") && config.agents.named[e] === undefined);
}

/** Matches refs (`server`, `server/name`, `server/name:alias`) against one kind of listing. */
function select<T extends { name: string }>(
  manager: McpClientManager,
  refs: readonly string[],
  list: (server: string) => readonly T[],
): Array<{ server: string; item: T; as: string }> {
  const out: Array<{ server: string; item: T; as: string }> = [];
  const seen = new Set<string>();
  for (const raw of refs) {
    const ref = parseToolRef(raw);
    if (!manager.serverNames().includes(ref.server)) continue;
    for (const item of list(ref.server)) {
      if (ref.tool !== undefined && item.name !== ref.tool) continue;
      const as = ref.alias ?? item.name;
      if (seen.has(as)) continue;
      seen.add(as);
      out.push({ server: ref.server, item, as });
    }
  }
  return out;
}

export function publishedExtras(config: NanobotConfig, manager: McpClientManager): PublishedExtras {
  const p = config.publish;
  const servers = p.mcpServers ?? [];
  const listing = (server: string) => manager.connection(server)?.listing;
  const connection = (server: string) => {
    const conn = manager.connection(server);
    if (!conn) throw new McpError(ErrorCode.InternalError, `MCP server "${server}" is not available`);
    return conn;
  };

  const tools = select(manager, [...servers, ...(p.tools ?? []), ...entrypointToolRefs(config)], (s) => listing(s)?.tools ?? []).map(
    ({ server, item, as }): ServedTool => ({
      definition: { ...item, name: as },
      call: (args, scope) => connection(server).callTool(item.name, args, { signal: scope.extra.signal, timeoutMs: CALL_TIMEOUT_MS }),
    }),
  );
  const prompts = select(manager, [...servers, ...(p.prompts ?? [])], (s) => listing(s)?.prompts ?? []).map(
    ({ server, item, as }): ServedPrompt => ({
      definition: { ...item, name: as },
      get: (args, scope) => connection(server).getPrompt(item.name, args, scope.extra.signal),
    }),
  );
  // Resources are addressed by URI: `server/<uri>` would be ambiguous, so a ref names a server.
  const resourceServers = [...servers, ...(p.resources ?? []).map((r) => parseToolRef(r).server)];
  const resources: ServedResource[] = [];
  const seenUris = new Set<string>();
  for (const server of new Set(resourceServers)) {
    for (const item of listing(server)?.resources ?? []) {
      if (seenUris.has(item.uri)) continue;
      seenUris.add(item.uri);
      resources.push({
        definition: item,
        read: (scope) => connection(server).readResource(item.uri, scope.extra.signal),
        // A server without subscriptions simply never reports a change.
        subscribe: async (scope) => void (await connection(server).subscribeResource(item.uri, scope.extra.signal)),
      });
    }
  }
  const templateServers = new Set([...servers, ...(p.resourceTemplates ?? []).map((r) => parseToolRef(r).server)]);
  const resourceTemplates: ServedResourceTemplate[] = [];
  for (const server of templateServers) {
    for (const item of listing(server)?.resourceTemplates ?? []) {
      const pattern = templatePattern(item.uriTemplate);
      resourceTemplates.push({
        definition: item,
        match: (uri) => pattern(uri),
        read: (uri, _vars, scope) => connection(server).readResource(uri, scope.extra.signal),
      });
    }
  }
  return { tools, prompts, resources, resourceTemplates };
}

/** A matcher for simple RFC 6570 templates (`{name}` segments), enough to route reads. */
function templatePattern(template: string): (uri: string) => Record<string, string> | undefined {
  const names: string[] = [];
  const source = template
    .split(/(\{[^}]+\})/)
    .map((part) => {
      const m = /^\{([^}]+)\}$/.exec(part);
      if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      names.push(m[1]!.replace(/^[+#]/, ""));
      return "(.+?)";
    })
    .join("");
  const re = new RegExp(`^${source}$`);
  return (uri) => {
    const m = re.exec(uri);
    if (!m) return undefined;
    return Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1] ?? "")]));
  };
}

/**
 * Resource changes the re-exported servers report, for the clients that subscribed to them
 * (whether or not a call is running). The MCP servers connect lazily, so the watch starts once
 * they have.
 */
export function watchPublished(source: { mcp(): Promise<McpClientManager> }, onUpdated: (uri: string) => void): () => void {
  let stop: (() => void) | undefined;
  let stopped = false;
  void source.mcp().then(
    (manager) => {
      if (!stopped) stop = manager.onResourceUpdated((_server, uri) => onUpdated(uri));
    },
    () => undefined,
  );
  return () => {
    stopped = true;
    stop?.();
  };
}
