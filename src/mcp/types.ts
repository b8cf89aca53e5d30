/**
 * Shapes the MCP host side accepts and hands out. The server map is structural so the config
 * layer's parsed `mcpServers` entries can be passed as they are.
 */
import type { Message } from "../core/messages.js";

export type McpTransportType = "stdio" | "http" | "sse";

/** One configured MCP server: a command to spawn (stdio) or a URL (Streamable HTTP / SSE). */
export interface McpServerSpec {
  type?: McpTransportType;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  /** OAuth client settings for a remote server (src/mcp/oauth/). */
  oauth?: McpOAuthSpec;
  /** MCP tool names to expose; absent or containing `*` = all. */
  enabledTools?: string[];
  /** Seconds before a tool call is cancelled (default 30). */
  toolTimeout?: number;
  /** Seconds the startup handshake may take (default 20). */
  connectTimeout?: number;
  /** Go nanobot: only these tools, renamed / redescribed / with a replaced input schema. */
  toolOverrides?: Record<string, { name?: string; description?: string; inputSchema?: Record<string, unknown> }>;
  /** Go nanobot: put before every tool name this server exposes (after `toolOverrides`). */
  toolPrefix?: string;
  /** Go nanobot MCP message hooks: JSON-RPC method (Go's key syntax) → `server/tool` targets. */
  hooks?: Record<string, string | ReadonlyArray<string | Record<string, unknown>>>;
}

/** `mcpServers.<x>.oauth`: a pre-registered client, scopes, a client ID metadata document, or machine-to-machine credentials. */
export interface McpOAuthSpec {
  clientId?: string;
  clientSecret?: string;
  scopes?: string[];
  clientMetadataUrl?: string;
  grant?: "authorization_code" | "client_credentials";
  privateKey?: string;
  signingAlgorithm?: string;
  callbackPort?: number;
}

/**
 * Completes an OAuth authorization headlessly or with a user: given the authorization URL,
 * resolves with the code the redirect carried. Absent on faces without a user.
 */
export type OAuthAuthorizer = (server: string, authorizationUrl: URL) => Promise<string>;

export type McpServersConfig = Record<string, McpServerSpec>;

/** A `sampling/createMessage` request from a server, in core vocabulary. */
export interface SamplingRequest {
  server: string;
  messages: Message[];
  systemPrompt?: string;
  maxTokens: number;
  temperature?: number;
  stopSequences?: string[];
  /** Model names the server hinted at, in preference order (an agent name is tried first by the host). */
  modelHints: string[];
}

export interface SamplingResponse {
  text: string;
  model: string;
  stopReason?: "endTurn" | "stopSequence" | "maxTokens" | (string & {});
}

/** Answers sampling requests (the host runs the hinted agent with its tools, else the default model with none). */
export type SamplingHandler = (request: SamplingRequest, signal: AbortSignal) => Promise<SamplingResponse>;

/** An `elicitation/create` request from a server. */
export interface ElicitationRequest {
  server: string;
  message: string;
  mode: "form" | "url";
  /** JSON schema of the form (form mode). */
  requestedSchema?: Record<string, unknown>;
  /** Where the user should go (url mode). */
  url?: string;
  /**
   * Session keys of the turns that had a tool call in flight on this server when the request
   * arrived; the host asks the user of that session (see `ElicitationRouter`).
   */
  callers?: string[];
}

export interface ElicitationResponse {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, string | number | boolean | string[]>;
}

/** Asks the user; a channel that cannot ask should return `{ action: "decline" }`. */
export type ElicitationHandler = (request: ElicitationRequest, signal: AbortSignal) => Promise<ElicitationResponse>;

export interface McpRoot {
  uri: string;
  name?: string;
}

export type McpLogFn = (level: "debug" | "info" | "warn" | "error", msg: string, data?: Record<string, unknown>) => void;

export interface McpManagerOptions {
  /** Used to expand `${VAR}` left in env, headers, args and urls (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Startup handshake limit per server in ms when the server sets no `connectTimeout` (default 20 000). */
  connectTimeoutMs?: number;
  /** Per-call limit in ms when the server sets no `toolTimeout` (default 30 000). */
  defaultToolTimeoutMs?: number;
  /** Wait before the single retry after a transport error (injected in tests). */
  sleep?: (ms: number) => Promise<void>;
  /** Delay before that retry in ms (default 1000). */
  retryDelayMs?: number;
  sampling?: SamplingHandler;
  /** When absent the capability is not advertised, so servers do not ask. */
  elicitation?: ElicitationHandler;
  /** Advertised (and answered on `roots/list`) only when given. */
  roots?: McpRoot[];
  log?: McpLogFn;
  clientName?: string;
  clientVersion?: string;
  /** `mcp_<server>_<tool>` (Python-style configs, the default) or Go's bare names. */
  toolNaming?: "python" | "go";
  /** Where OAuth tokens are kept, one file per server (`<home>/mcp-oauth`); absent = in memory only. */
  oauthDir?: string;
  /** Completes an authorization when a server asks for one mid-session; absent = "an admin must run `nanobot mcp login`". */
  oauthAuthorize?: OAuthAuthorizer;
  /** The loopback redirect of a login in progress (`nanobot mcp login`). */
  oauthRedirectUrl?: string;
}

/** Why a server is not usable, for status output and `nanobot mcp list`. */
export interface McpServerFailure {
  server: string;
  reason: string;
}
