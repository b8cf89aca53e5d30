/**
 * One MCP server: handshake with a time limit, the server's tool/prompt/resource listings kept
 * fresh, calls with a per-call timeout, progress and cancellation, and a reconnect when the
 * process crashed or the HTTP session was dropped.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  ProgressNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type {
  CallToolResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool as McpTool,
} from "@modelcontextprotocol/sdk/types.js";
import { AbortedError, ToolTimeoutError, errorMessage } from "../core/errors.js";
import { clientCapabilities, registerClientRequestHandlers } from "./client-requests.js";
import { ELICITATION_TIMEOUT_MS } from "./elicitation-router.js";
import { listToolsPage } from "./lenient-tools.js";
import { listAll } from "./paging.js";
import { PausableTimer } from "./pausable-timer.js";
import { isTransientTransportError } from "./transient.js";
import { detectTransportType, expandVars } from "./server-spec.js";
import { createTransport, shouldFallBackToSse } from "./transport.js";
import { HookedTransport, UNHOOKED_META_KEY, hookRejectionText } from "./hooked-transport.js";
import type { HookCaller } from "./hooks.js";
import { describeConnectError } from "./connect-error.js";
import { withMcpRequestSpan } from "./request-span.js";
import type { McpRequestTarget } from "./request-span.js";
import { MAX_AUTHORIZATIONS, authorizedSince, loginReason, oauthProviderFor, oauthStoreFor } from "./oauth/connect-auth.js";
import type { NanobotOAuthProvider } from "./oauth/provider.js";
import type { OAuthStore } from "./oauth/token-store.js";
import { scrubSecretText } from "../core/scrub.js";
import type { BuiltTransport } from "./transport.js";
import type { McpManagerOptions, McpServerSpec, McpTransportType } from "./types.js";

/** What a server offers, as last listed. */
export interface ServerListing {
  tools: McpTool[];
  prompts: Prompt[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  instructions?: string;
  /** The server's `serverInfo` from its initialize result (a publishing proxy repeats it). */
  serverInfo?: { name: string; version: string };
}

export type ProgressFn = (progress: number, total?: number, message?: string) => void;

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
  onProgress?: ProgressFn;
  /** Session key of the turn making the call: whom to ask when the server elicits meanwhile. */
  caller?: string;
  /** A hook tool's own call: passes the server's MCP message hooks unhooked. */
  unhooked?: boolean;
}

interface InFlightCall {
  caller?: string;
  timer: PausableTimer;
}

export type ConnectionOptions = McpManagerOptions & {
  env: Record<string, string | undefined>;
  connectTimeoutMs: number;
  retryDelayMs: number;
  sleep: (ms: number) => Promise<void>;
  /** How the server's MCP message hooks (`spec.hooks`) call their hook tools. */
  hookCaller?: HookCaller;
};

const EMPTY_LISTING: ServerListing = { tools: [], prompts: [], resources: [], resourceTemplates: [] };

export class McpConnection {
  listing: ServerListing = EMPTY_LISTING;
  private client?: Client;
  private built?: BuiltTransport;
  private oauth?: NanobotOAuthProvider;
  private readonly oauthStore?: OAuthStore;
  private opening?: Promise<Client>;
  private closed = false;
  private progressSeq = 0;
  private refreshSeq = 0;
  private latestRefresh?: Promise<void>;
  private readonly progressHandlers = new Map<string, ProgressFn>();
  private readonly inFlight = new Set<InFlightCall>();
  private readonly listeners = new Set<() => void>();
  private readonly resourceListeners = new Set<(uri: string) => void>();
  /** Resources subscribed to, subscribed again on a new connection. */
  private readonly subscriptions = new Set<string>();

  constructor(
    readonly name: string,
    readonly spec: McpServerSpec,
    private readonly options: ConnectionOptions,
  ) {
    this.oauthStore = oauthStoreFor(name, spec, options);
  }

  /** Pid of the spawned stdio server while connected. */
  get pid(): number | undefined {
    const t = this.built?.transport as { pid?: number | null } | undefined;
    return this.client ? (t?.pid ?? undefined) : undefined;
  }

  get transportType(): McpTransportType | undefined {
    return this.built?.type;
  }

  /** Elicitation is advertised: a call may wait on the user's answer (its engine backstop allows for it). */
  get canElicit(): boolean {
    return this.options.elicitation !== undefined;
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Called after every listing change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called with the URI of every `notifications/resources/updated` the server sends; returns the unsubscribe. */
  onResourceUpdated(listener: (uri: string) => void): () => void {
    this.resourceListeners.add(listener);
    return () => this.resourceListeners.delete(listener);
  }

  /**
   * Asks the server to report changes of `uri` (kept across reconnects). Resolves false when
   * the server does not offer resource subscriptions.
   */
  async subscribeResource(uri: string, signal?: AbortSignal): Promise<boolean> {
    const client = await this.ensureConnected();
    if (!client.getServerCapabilities()?.resources?.subscribe) return false;
    if (this.subscriptions.has(uri)) return true;
    await this.withRetry(signal, (c) => c.subscribeResource({ uri }, { signal }));
    this.subscriptions.add(uri);
    return true;
  }

  /** Connects (or reuses the live connection); rejects with a reason on failure or timeout. */
  async ensureConnected(): Promise<Client> {
    if (this.closed) throw new Error(`MCP server '${this.name}' is closed`);
    if (this.client) return this.client;
    this.opening ??= this.open().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  callTool(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    return withMcpRequestSpan(this.spanTarget(), "tools/call", tool, async (span) => {
      const result = await this.callToolOnce(tool, args, options);
      if (result.isError) span?.fail(undefined, "tool_error");
      return result;
    });
  }

  private callToolOnce(tool: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    return this.withRetry(options.signal, async (client) => {
      const controller = new AbortController();
      let timedOut = false;
      const onAbort = (): void => controller.abort(options.signal?.reason);
      options.signal?.addEventListener("abort", onAbort, { once: true });
      // Held while the server waits on the user's answer to an elicitation.
      const timer = new PausableTimer(options.timeoutMs, () => {
        timedOut = true;
        controller.abort(new ToolTimeoutError(tool, options.timeoutMs));
      });
      const call: InFlightCall = { ...(options.caller ? { caller: options.caller } : {}), timer };
      this.inFlight.add(call);
      // Our own progress token: the SDK drops its handler when the result arrives, before it
      // has dispatched the last progress notification (see fixtures/mcp/README.md).
      const token = options.onProgress ? `${this.name}-${++this.progressSeq}` : undefined;
      if (token && options.onProgress) this.progressHandlers.set(token, options.onProgress);
      const meta = { ...(token ? { progressToken: token } : {}), ...(options.unhooked ? { [UNHOOKED_META_KEY]: true } : {}) };
      try {
        const result = await client.callTool(
          { name: tool, arguments: args, ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}) },
          CallToolResultSchema,
          // The SDK's own limit is only a backstop behind ours (which a pending elicitation holds).
          { signal: controller.signal, timeout: options.timeoutMs + 5_000 + (this.options.elicitation ? ELICITATION_TIMEOUT_MS : 0) },
        );
        return result as CallToolResult;
      } catch (err) {
        if (timedOut) throw new ToolTimeoutError(tool, options.timeoutMs);
        if (options.signal?.aborted) throw new AbortedError(undefined, { cause: err });
        throw err;
      } finally {
        timer.clear();
        this.inFlight.delete(call);
        options.signal?.removeEventListener("abort", onAbort);
        if (token) this.progressHandlers.delete(token);
      }
    });
  }

  getPrompt(name: string, args: Record<string, string>, signal?: AbortSignal): Promise<GetPromptResult> {
    return withMcpRequestSpan(this.spanTarget(), "prompts/get", name, () =>
      this.withRetry(signal, (client) => client.getPrompt({ name, arguments: args }, { signal })),
    );
  }

  readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    return withMcpRequestSpan(this.spanTarget(), "resources/read", uri, () => this.withRetry(signal, (client) => client.readResource({ uri }, { signal })));
  }

  private spanTarget(): McpRequestTarget {
    return { server: this.name, spec: this.spec, env: this.options.env };
  }

  async close(): Promise<void> {
    this.closed = true;
    const opening = this.opening;
    if (opening) await opening.catch(() => undefined);
    // Tell a Streamable HTTP server the session is over instead of letting it time out.
    const transport = this.built?.transport;
    if (this.client && transport instanceof StreamableHTTPClientTransport) await transport.terminateSession().catch(() => undefined);
    await this.dropClient();
  }

  /** Runs `op`; on a transport failure waits, reconnects and tries exactly once more. */
  private async withRetry<T>(signal: AbortSignal | undefined, op: (client: Client) => Promise<T>): Promise<T> {
    const client = await this.ensureConnected();
    try {
      return await this.withAuthorization(() => op(client));
    } catch (err) {
      // A token that can no longer be refreshed, or a step-up nobody here can authorise.
      const login = loginReason(err, this.name);
      if (login) throw new Error(`MCP server '${this.name}' ${login}`, { cause: err });
      // A message hook's rejection: its reason is the whole error (no SDK "MCP error -32042:" prefix).
      const rejected = hookRejectionText(err);
      if (rejected) throw new Error(rejected, { cause: err });
      if (!isTransientTransportError(err) || signal?.aborted || this.closed) throw err;
      this.options.log?.("warn", "MCP transport error, reconnecting", { server: this.name, error: errorMessage(err) });
      if (this.client === client) await this.dropClient();
      await this.options.sleep(this.options.retryDelayMs);
      return op(await this.ensureConnected());
    }
  }

  /** Runs `send`; when it stopped for an authorization that completed meanwhile, finishes it and sends again. */
  private async withAuthorization<T>(send: () => Promise<T>): Promise<T> {
    for (let authorizations = 0; ; authorizations++) {
      try {
        return await send();
      } catch (err) {
        if (authorizations >= MAX_AUTHORIZATIONS || !authorizedSince(err, this.oauth)) throw err;
      }
    }
  }

  /** Connects over the detected transport; a URL without `type` that refuses Streamable HTTP gets SSE. */
  private async open(): Promise<Client> {
    const type = detectTransportType(this.spec);
    try {
      return await this.openOver(type);
    } catch (err) {
      if (this.closed || !shouldFallBackToSse(this.spec, type, err)) throw err;
      this.options.log?.("info", "MCP server refused Streamable HTTP, trying SSE", { server: this.name, error: errorMessage(err) });
      try {
        return await this.openOver("sse");
      } catch (sseErr) {
        // Neither transport answered: the Streamable HTTP refusal names the real problem (a 404, say).
        this.options.log?.("debug", "SSE fallback failed too", { server: this.name, error: errorMessage(sseErr) });
        throw new Error(`${errorMessage(err)} (SSE tried too)`, { cause: err });
      }
    }
  }

  private async openOver(type: McpTransportType, authorizations = 0): Promise<Client> {
    const oauth = await oauthProviderFor(this.name, this.spec, this.oauthStore, this.options);
    const built = createTransport(this.name, this.spec, this.options.env, type, oauth, oauth?.fetch);
    const client = new Client(
      { name: this.options.clientName ?? "nanobot", version: this.options.clientVersion ?? "0.1.0" },
      { capabilities: clientCapabilities(this.options) },
    );
    registerClientRequestHandlers(client, this.name, this.options, {
      callers: () => [...this.inFlight].map((c) => c.caller).filter((c): c is string => c !== undefined),
      holdCallTimers: () => {
        const releases = [...this.inFlight].map((c) => c.timer.hold());
        return () => releases.forEach((release) => release());
      },
    });
    client.setNotificationHandler(ProgressNotificationSchema, (n) => {
      this.progressHandlers.get(String(n.params.progressToken))?.(n.params.progress, n.params.total, n.params.message);
    });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.refresh(client));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => this.refresh(client));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => this.refresh(client));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      for (const listener of this.resourceListeners) listener(n.params.uri);
    });
    client.onerror = (err) => this.options.log?.("debug", "MCP client error", { server: this.name, error: errorMessage(err) });

    const timeoutMs = this.connectTimeoutMs();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new Error(`handshake timed out after ${timeoutMs} ms (mcpServers.${this.name}.connectTimeout)`);
        controller.abort(error);
        reject(error);
      }, timeoutMs);
    });
    try {
      // MCP message hooks see every message on the wire (src/mcp/hooked-transport.ts).
      const hooks = this.spec.hooks && Object.keys(this.spec.hooks).length > 0 ? this.spec.hooks : undefined;
      const transport =
        hooks && this.options.hookCaller
          ? new HookedTransport(built.transport, { server: this.name, hooks, call: this.options.hookCaller, ...(this.options.log ? { log: this.options.log } : {}) })
          : built.transport;
      await Promise.race([client.connect(transport, { signal: controller.signal, timeout: timeoutMs }), timeout]);
    } catch (err) {
      await client.close().catch(() => undefined);
      // The first request met a 401 and the login finished: exchange the code, then connect again.
      if (authorizations < MAX_AUTHORIZATIONS && authorizedSince(err, oauth)) {
        clearTimeout(timer);
        return this.openOver(type, authorizations + 1);
      }
      const login = loginReason(err, this.name);
      if (login) throw new Error(login, { cause: err });
      const tail = built.stderrTail();
      const reason = describeConnectError(err, { url: this.spec.url ? expandVars(this.spec.url, this.options.env) : undefined, command: this.spec.command });
      // The stderr tail and URLs can quote tokens; the message reaches logs, stderr and the web UI.
      throw new Error(scrubSecretText(`${reason}${tail ? ` (stderr: ${tail.split("\n").slice(-3).join(" | ")})` : ""}`), { cause: err });
    } finally {
      clearTimeout(timer);
    }
    if (this.closed) {
      await client.close().catch(() => undefined);
      throw new Error(`MCP server '${this.name}' is closed`);
    }
    client.onclose = () => {
      if (this.client !== client) return;
      this.client = undefined;
      this.options.log?.("warn", "MCP server disconnected", { server: this.name });
    };
    this.client = client;
    this.built = built;
    this.oauth = oauth;
    const info = client.getServerVersion();
    this.listing = { ...this.listing, instructions: client.getInstructions(), ...(info ? { serverInfo: { name: info.name, version: info.version } } : {}) };
    // Servers may add tools right after `notifications/initialized`; list now, not on list_changed,
    // and wait for any refresh a list_changed started meanwhile, since that one wins.
    await this.refresh(client);
    for (let latest = this.latestRefresh; latest; ) {
      await latest;
      latest = latest === this.latestRefresh ? undefined : this.latestRefresh;
    }
    // A new connection (a new server session) knows nothing of the old one's subscriptions.
    for (const uri of this.subscriptions) {
      await client.subscribeResource({ uri }).catch((err: unknown) => this.options.log?.("debug", "MCP resubscribe failed", { server: this.name, uri, error: errorMessage(err) }));
    }
    return client;
  }

  /** The server's `connectTimeout` (seconds) or the manager's default. */
  private connectTimeoutMs(): number {
    const seconds = this.spec.connectTimeout;
    return seconds !== undefined && seconds > 0 ? seconds * 1000 : this.options.connectTimeoutMs;
  }

  /** Re-lists everything; only the newest refresh wins when several overlap. */
  private refresh(client: Client): Promise<void> {
    const run = this.relist(client, ++this.refreshSeq);
    this.latestRefresh = run;
    return run;
  }

  private async relist(client: Client, seq: number): Promise<void> {
    const caps = client.getServerCapabilities() ?? {};
    try {
      const [tools, prompts, resources, resourceTemplates] = await this.withAuthorization(() => Promise.all([
        caps.tools ? listAll((cursor) => listToolsPage(client, cursor, this.name, this.options.log), (r) => r.tools) : Promise.resolve([]),
        caps.prompts ? listAll((cursor) => client.listPrompts({ cursor }), (r) => r.prompts).catch(() => []) : Promise.resolve([]),
        caps.resources ? listAll((cursor) => client.listResources({ cursor }), (r) => r.resources).catch(() => []) : Promise.resolve([]),
        caps.resources
          ? listAll((cursor) => client.listResourceTemplates({ cursor }), (r) => r.resourceTemplates).catch(() => [])
          : Promise.resolve([]),
      ]));
      if (seq !== this.refreshSeq || this.client !== client) return;
      this.listing = { tools, prompts, resources, resourceTemplates, instructions: this.listing.instructions, serverInfo: this.listing.serverInfo };
      for (const listener of this.listeners) listener();
    } catch (err) {
      this.options.log?.("warn", "MCP listing failed", { server: this.name, error: errorMessage(err) });
    }
  }

  private async dropClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.progressHandlers.clear();
    if (client) await client.close().catch(() => undefined);
  }
}
