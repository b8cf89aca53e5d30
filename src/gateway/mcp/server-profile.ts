/**
 * What an MCP server built by nanobot serves, and how it becomes an SDK `Server`. We use the
 * SDK's low-level `Server` (not `McpServer`) so tool input schemas are sent exactly as written
 * (JSON Schema 2020-12 keywords such as `$defs` survive) and so one profile can be extended by
 * another (the conformance test profile adds fixtures on top of the chat profile).
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type {
  RequestId,
  CallToolResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ServerCapabilities,
  ServerNotification,
  ServerRequest,
  Tool as McpToolDefinition,
} from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../../core/errors.js";

export type HandlerExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Where a request runs: the nanobot session bound to the MCP session, and the SDK's extras. */
export interface CallScope {
  sessionKey: string;
  extra: HandlerExtra;
  /**
   * Ends the SSE stream that carries this request's reply (HTTP with an event store only); the
   * client reconnects with `Last-Event-ID` and gets the reply from the store (SEP-1699 polling).
   * Use it only once the client holds an event id on that stream: a priming event (clients of
   * 2025-11-25 and later) or any notification sent on it.
   */
  closeStream?: () => void;
}

export interface BuildOptions {
  /** How `closeStream` reaches the transport for clients the SDK offers no `closeSSEStream` to. */
  closeRequestStream?: (requestId: RequestId) => void;
}

export interface ServedTool {
  definition: McpToolDefinition;
  call(args: Record<string, unknown>, scope: CallScope): Promise<CallToolResult>;
}

export interface ServedResource {
  definition: Resource;
  read(scope: CallScope): Promise<ReadResourceResult>;
}

export interface ServedResourceTemplate {
  definition: ResourceTemplate;
  /** The template's variables when `uri` matches it, else undefined. */
  match(uri: string): Record<string, string> | undefined;
  read(uri: string, vars: Record<string, string>, scope: CallScope): Promise<ReadResourceResult>;
}

export interface ServedPrompt {
  definition: Prompt;
  get(args: Record<string, string>, scope: CallScope): Promise<GetPromptResult>;
  /** Suggestions for one argument's partial value (`completion/complete`). */
  complete?(argument: string, value: string): string[];
}

export interface ServerProfile {
  name: string;
  version: string;
  instructions?: string;
  tools: ServedTool[];
  resources?: ServedResource[];
  resourceTemplates?: ServedResourceTemplate[];
  prompts?: ServedPrompt[];
  /** Declare the `logging` capability (clients may then `logging/setLevel`). */
  logging?: boolean;
  /** Accept `resources/subscribe` and `resources/unsubscribe`. */
  subscriptions?: boolean;
}

/** The nanobot session an MCP session talks in: `mcp:<session id>`, `mcp:stdio` without one. */
export function mcpSessionKey(sessionId: string | undefined): string {
  return `mcp:${sessionId ?? "stdio"}`;
}

function capabilitiesOf(profile: ServerProfile): ServerCapabilities {
  const caps: ServerCapabilities = { tools: { listChanged: false } };
  const hasResources = (profile.resources?.length ?? 0) + (profile.resourceTemplates?.length ?? 0) > 0;
  if (hasResources || profile.subscriptions) caps.resources = { listChanged: false, subscribe: profile.subscriptions === true };
  if (profile.prompts?.length) caps.prompts = { listChanged: false };
  if (profile.prompts?.some((p) => p.complete)) caps.completions = {};
  if (profile.logging) caps.logging = {};
  return caps;
}

/** A fresh SDK server for one connection (the SDK binds one server to one transport). */
export function buildMcpServer(profile: ServerProfile, options: BuildOptions = {}): Server {
  const server = new Server(
    { name: profile.name, version: profile.version },
    { capabilities: capabilitiesOf(profile), ...(profile.instructions ? { instructions: profile.instructions } : {}) },
  );
  const scopeOf = (extra: HandlerExtra): CallScope => {
    const close = options.closeRequestStream;
    const closeStream = extra.closeSSEStream ?? (close ? () => close(extra.requestId) : undefined);
    return { sessionKey: mcpSessionKey(extra.sessionId), extra, ...(closeStream ? { closeStream } : {}) };
  };
  const tools = new Map(profile.tools.map((t) => [t.definition.name, t]));

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: profile.tools.map((t) => t.definition) }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}"`);
    try {
      return await tool.call(request.params.arguments ?? {}, scopeOf(extra));
    } catch (err) {
      // A failing tool is a tool error the caller can read, not a protocol error.
      return { isError: true, content: [{ type: "text", text: errorMessage(err) }] };
    }
  });

  const caps = capabilitiesOf(profile);
  if (caps.resources) installResources(server, profile, scopeOf);
  if (caps.prompts) installPrompts(server, profile, scopeOf);
  return server;
}

function installResources(server: Server, profile: ServerProfile, scopeOf: (extra: HandlerExtra) => CallScope): void {
  const resources = profile.resources ?? [];
  const templates = profile.resourceTemplates ?? [];
  server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: resources.map((r) => r.definition) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: templates.map((t) => t.definition) }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const direct = resources.find((r) => r.definition.uri === uri);
    if (direct) return direct.read(scopeOf(extra));
    for (const template of templates) {
      const vars = template.match(uri);
      if (vars) return template.read(uri, vars, scopeOf(extra));
    }
    throw new McpError(ErrorCode.InvalidParams, `unknown resource "${uri}"`);
  });
  if (profile.subscriptions) {
    const subscribed = new Set<string>();
    server.setRequestHandler(SubscribeRequestSchema, (request) => {
      subscribed.add(request.params.uri);
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      subscribed.delete(request.params.uri);
      return {};
    });
  }
}

function installPrompts(server: Server, profile: ServerProfile, scopeOf: (extra: HandlerExtra) => CallScope): void {
  const prompts = profile.prompts ?? [];
  server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: prompts.map((p) => p.definition) }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const prompt = prompts.find((p) => p.definition.name === request.params.name);
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `unknown prompt "${request.params.name}"`);
    const args = request.params.arguments ?? {};
    const missing = (prompt.definition.arguments ?? []).filter((a) => a.required && args[a.name] === undefined).map((a) => a.name);
    if (missing.length > 0) throw new McpError(ErrorCode.InvalidParams, `missing prompt arguments: ${missing.join(", ")}`);
    return prompt.get(args, scopeOf(extra));
  });
  if (prompts.some((p) => p.complete)) {
    server.setRequestHandler(CompleteRequestSchema, (request) => {
      const { ref, argument } = request.params;
      const prompt = ref.type === "ref/prompt" ? prompts.find((p) => p.definition.name === ref.name) : undefined;
      const values = prompt?.complete?.(argument.name, argument.value).slice(0, 100) ?? [];
      return { completion: { values, total: values.length, hasMore: false } };
    });
  }
}
