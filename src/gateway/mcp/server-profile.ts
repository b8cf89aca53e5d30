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
  InitializeRequestSchema,
  ListPromptsRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type {
  RequestId,
  CallToolResult,
  GetPromptResult,
  InitializeRequest,
  InitializeResult,
  LoggingLevel,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ServerCapabilities,
  ServerNotification,
  ServerRequest,
  Tool as McpToolDefinition,
} from "@modelcontextprotocol/sdk/types.js";
import { mcpErrorText } from "../../mcp/error-text.js";
import { sendBareErrors } from "./wire-errors.js";

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
  /**
   * Sends a log message on this request's stream (profiles with `logging`), unless the client
   * asked for a higher level with `logging/setLevel`.
   */
  log(level: LoggingLevel, data: unknown): Promise<void>;
  /** Tells the client `uri` changed, when it subscribed to it (profiles with `subscriptions`). */
  resourceUpdated(uri: string): Promise<void>;
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
  /** Asks the resource's source to report its changes (a re-exported server's own subscription). */
  subscribe?(scope: CallScope): Promise<void>;
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
  /**
   * Changes that happen outside any call (a re-exported server's resource changed): calls
   * `onUpdated` with the URI; returns the unsubscribe. Subscribed clients hear of it on their
   * standalone stream.
   */
  watch?(onUpdated: (uri: string) => void): () => void;
  /** Declare `completions` (prompt arguments; prompts without `complete` get no suggestions). */
  completions?: boolean;
  /**
   * Items listed anew for every request (a Go config's `publish.tools`/`mcpServers`… re-exported
   * from its MCP servers). Their presence declares the prompts and resources capabilities.
   */
  extras?: () => Promise<ProfileExtras>;
  /**
   * Resolved at each `initialize`: Go's `publish.introduction`, announced as the experimental
   * capability `ai.nanobot: { intro }`, and, for a single-server proxy, that server's own
   * `serverInfo` and `instructions` in place of the profile's.
   */
  initialize?: () => Promise<InitializeOverride>;
}

export interface InitializeOverride {
  intro?: string;
  serverInfo?: { name: string; version: string };
  instructions?: string;
}

export interface ProfileExtras {
  tools: ServedTool[];
  prompts: ServedPrompt[];
  resources: ServedResource[];
  resourceTemplates: ServedResourceTemplate[];
}

const NO_EXTRAS: ProfileExtras = { tools: [], prompts: [], resources: [], resourceTemplates: [] };

const LEVELS: readonly LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
const severity = (level: LoggingLevel): number => LEVELS.indexOf(level);

/** The Go nanobot's experimental capability key. */
export const NANOBOT_CAPABILITY = "ai.nanobot";

/** The nanobot session an MCP session talks in: `mcp:<session id>`, `mcp:stdio` without one. */
export function mcpSessionKey(sessionId: string | undefined): string {
  return `mcp:${sessionId ?? "stdio"}`;
}

function capabilitiesOf(profile: ServerProfile): ServerCapabilities {
  const caps: ServerCapabilities = { tools: { listChanged: false } };
  const hasResources = (profile.resources?.length ?? 0) + (profile.resourceTemplates?.length ?? 0) > 0;
  if (hasResources || profile.subscriptions || profile.extras) caps.resources = { listChanged: false, subscribe: profile.subscriptions === true };
  if (profile.prompts || profile.extras) caps.prompts = { listChanged: false };
  if (profile.completions || profile.prompts?.some((p) => p.complete)) caps.completions = {};
  if (profile.logging) caps.logging = {};
  return caps;
}

/** A fresh SDK server for one connection (the SDK binds one server to one transport). */
export function buildMcpServer(profile: ServerProfile, options: BuildOptions = {}): Server {
  const server = new Server(
    { name: profile.name, version: profile.version },
    { capabilities: capabilitiesOf(profile), ...(profile.instructions ? { instructions: profile.instructions } : {}) },
  );
  sendBareErrors(server);
  // One SDK server per connection: the level and the subscriptions are this client's.
  let minLevel: LoggingLevel | undefined;
  const subscribed = new Set<string>();
  const scopeOf = (extra: HandlerExtra): CallScope => {
    const close = options.closeRequestStream;
    const closeStream = extra.closeSSEStream ?? (close ? () => close(extra.requestId) : undefined);
    return {
      sessionKey: mcpSessionKey(extra.sessionId),
      extra,
      ...(closeStream ? { closeStream } : {}),
      log: async (level, data) => {
        if (!profile.logging || extra.signal.aborted || severity(level) < severity(minLevel ?? "debug")) return;
        await extra.sendNotification({ method: "notifications/message", params: { level, logger: profile.name, data } });
      },
      resourceUpdated: async (uri) => {
        if (!subscribed.has(uri) || extra.signal.aborted) return;
        await extra.sendNotification({ method: "notifications/resources/updated", params: { uri } });
      },
    };
  };
  if (profile.logging) {
    server.setRequestHandler(SetLevelRequestSchema, (request) => {
      minLevel = request.params.level;
      return {};
    });
  }
  const tools = new Map(profile.tools.map((t) => [t.definition.name, t]));
  const extras = (): Promise<ProfileExtras> => profile.extras?.() ?? Promise.resolve(NO_EXTRAS);

  if (profile.initialize) installInitialize(server, profile.initialize);
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    // Own tools win a name clash with a re-exported one.
    const more = (await extras()).tools.filter((t) => !tools.has(t.definition.name));
    return { tools: [...profile.tools, ...more].map((t) => t.definition) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = tools.get(request.params.name) ?? (await extras()).tools.find((t) => t.definition.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}"`);
    try {
      return await tool.call(request.params.arguments ?? {}, scopeOf(extra));
    } catch (err) {
      // A failing tool is a tool error the caller can read, not a protocol error.
      return { isError: true, content: [{ type: "text", text: mcpErrorText(err) }] };
    }
  });

  const caps = capabilitiesOf(profile);
  if (caps.resources) installResources(server, profile, scopeOf, extras, subscribed);
  if (profile.subscriptions && profile.watch) {
    const stop = profile.watch((uri) => {
      if (!subscribed.has(uri)) return;
      // No related request: the notice goes out on the client's standalone (GET) stream.
      void server.sendResourceUpdated({ uri }).catch(() => undefined);
    });
    const previous = server.onclose;
    server.onclose = () => {
      stop();
      previous?.();
    };
  }
  if (caps.prompts) installPrompts(server, profile, scopeOf, extras, caps.completions !== undefined);
  return server;
}

/**
 * Amends the SDK's own initialize result. The SDK fixes capabilities and server info at
 * construction, but the introduction may be dynamic (`${nanobot:time}`, an MCP prompt) and a
 * proxied server's info is known only once it connected, so both are resolved per `initialize`.
 */
function installInitialize(server: Server, resolve: () => Promise<InitializeOverride>): void {
  const sdk = server as unknown as { _oninitialize(request: InitializeRequest): Promise<InitializeResult> };
  const base = sdk._oninitialize.bind(server);
  server.setRequestHandler(InitializeRequestSchema, async (request) => {
    let result = await base(request);
    const over = await resolve();
    if (over.serverInfo) result = { ...result, serverInfo: over.serverInfo };
    if (over.instructions !== undefined) result = { ...result, instructions: over.instructions };
    if (over.intro !== undefined) {
      const experimental = { ...result.capabilities.experimental, [NANOBOT_CAPABILITY]: { intro: over.intro } };
      result = { ...result, capabilities: { ...result.capabilities, experimental } };
    }
    return result;
  });
}

function installResources(
  server: Server,
  profile: ServerProfile,
  scopeOf: (extra: HandlerExtra) => CallScope,
  extras: () => Promise<ProfileExtras>,
  subscribed: Set<string>,
): void {
  const own = profile.resources ?? [];
  const ownTemplates = profile.resourceTemplates ?? [];
  const all = async (): Promise<{ resources: ServedResource[]; templates: ServedResourceTemplate[] }> => {
    const more = await extras();
    return { resources: [...own, ...more.resources], templates: [...ownTemplates, ...more.resourceTemplates] };
  };
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: (await all()).resources.map((r) => r.definition) }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: (await all()).templates.map((t) => t.definition) }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const { resources, templates } = await all();
    const direct = resources.find((r) => r.definition.uri === uri);
    if (direct) return direct.read(scopeOf(extra));
    for (const template of templates) {
      const vars = template.match(uri);
      if (vars) return template.read(uri, vars, scopeOf(extra));
    }
    throw new McpError(ErrorCode.InvalidParams, `unknown resource "${uri}"`);
  });
  if (profile.subscriptions) {
    server.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
      const { uri } = request.params;
      subscribed.add(uri);
      const resource = (await all()).resources.find((r) => r.definition.uri === uri);
      await resource?.subscribe?.(scopeOf(extra));
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      subscribed.delete(request.params.uri);
      return {};
    });
  }
}

function installPrompts(
  server: Server,
  profile: ServerProfile,
  scopeOf: (extra: HandlerExtra) => CallScope,
  extras: () => Promise<ProfileExtras>,
  completions: boolean,
): void {
  const prompts = profile.prompts ?? [];
  const all = async (): Promise<ServedPrompt[]> => [...prompts, ...(await extras()).prompts];
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: (await all()).map((p) => p.definition) }));
  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const prompt = (await all()).find((p) => p.definition.name === request.params.name);
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `unknown prompt "${request.params.name}"`);
    const args = request.params.arguments ?? {};
    const missing = (prompt.definition.arguments ?? []).filter((a) => a.required && args[a.name] === undefined).map((a) => a.name);
    if (missing.length > 0) throw new McpError(ErrorCode.InvalidParams, `missing prompt arguments: ${missing.join(", ")}`);
    return prompt.get(args, scopeOf(extra));
  });
  if (completions) {
    // An unknown prompt or argument has no suggestions: an empty list, not an error.
    server.setRequestHandler(CompleteRequestSchema, async (request) => {
      const { ref, argument } = request.params;
      const prompt = ref.type === "ref/prompt" ? (await all()).find((p) => p.definition.name === ref.name) : undefined;
      const values = prompt?.complete?.(argument.name, argument.value).slice(0, 100) ?? [];
      return { completion: { values, total: values.length, hasMore: false } };
    });
  }
}
