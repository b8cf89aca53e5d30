/**
 * Built-in tool settings and MCP server entries. MCP servers are read from the top-level
 * `mcpServers` (Go nanobot, CONTRACT.md) and from `tools.mcpServers` (Python nanobot).
 */
import { z } from "zod";
import { isProviderKey } from "../tools/builtin/exec-env.js";
import {
  bool,
  nonNegativeInt,
  nonNegativeNumber,
  oneOf,
  port,
  positiveInt,
  str,
  stringArray,
  stringList,
  stringMap,
} from "./schema-primitives.js";

/** Transport names as written by both projects; normalised to stdio | http | sse. */
const MCP_TRANSPORTS = ["stdio", "http", "sse", "streamableHttp", "streamable-http", "streamable_http"] as const;

/** OAuth for a remote server (src/mcp/oauth/); without it the server's own metadata and dynamic registration decide. */
export const mcpOAuthSchema = z
  .strictObject({
    clientId: str().optional().describe("A client registered in advance (no dynamic registration)"),
    clientSecret: str().optional().describe("Its secret, for a confidential client"),
    scopes: stringList().optional().describe("Scopes to ask for when the server names none"),
    clientMetadataUrl: str()
      .refine((u) => /^https:\/\/[^/]+\/.+/.test(u), { error: "expected an https URL with a path" })
      .optional()
      .describe("A client ID metadata document: used as the client_id where the server supports it"),
    grant: oneOf(["authorization_code", "client_credentials"] as const)
      .optional()
      .describe('"authorization_code" (default: a user logs in with `nanobot mcp login`) or "client_credentials" (machine to machine)'),
    privateKey: str().optional().describe("PEM private key: client_credentials authenticated by a signed JWT (private_key_jwt)"),
    signingAlgorithm: str().optional().describe("JWT algorithm for privateKey (default RS256)"),
    callbackPort: port().optional().describe("Loopback port of the login callback (default: the one registered before, else any free port)"),
  })
  .refine((o) => o.grant !== "client_credentials" || (o.clientId !== undefined && (o.clientSecret !== undefined || o.privateKey !== undefined)), {
    error: "client_credentials needs clientId and clientSecret or privateKey",
  });

export const mcpServerSchema = z
  .strictObject({
    type: oneOf(MCP_TRANSPORTS)
      .transform((t): "stdio" | "http" | "sse" => (t === "stdio" || t === "sse" ? t : "http"))
      .optional()
      .describe("Inferred when omitted: command → stdio; a url ending in /sse → sse; another url → http, falling back to sse on a 4xx"),
    command: str().optional(),
    args: stringArray().optional(),
    env: stringMap().optional(),
    cwd: str().optional(),
    url: str().optional(),
    headers: stringMap().optional(),
    oauth: mcpOAuthSchema.optional().describe("OAuth client settings; `nanobot mcp login <server>` authorises"),
    enabledTools: stringList().optional().describe('Tool names to expose; ["*"] or absent = all'),
    toolTimeout: nonNegativeNumber().optional().describe("Seconds before a tool call is cancelled"),
    connectTimeout: nonNegativeNumber().optional().describe("Seconds the startup handshake may take (default 20)"),
    // Go nanobot: tool renames, a name prefix, and MCP message hooks (src/mcp/message-hooks.ts).
    toolOverrides: z
      .record(z.string(), z.looseObject({ name: str().optional(), description: str().optional(), inputSchema: z.record(z.string(), z.unknown()).optional() }))
      .optional()
      .describe("Only these tools, each renamed / redescribed / with a replaced input schema"),
    toolPrefix: str().optional().describe("Put before every tool name this server exposes"),
    hooks: z
      .record(z.string(), z.union([str(), z.array(str())], { error: "expected a hook tool reference or a list of them" }))
      .optional()
      .describe('JSON-RPC method (e.g. "tools/call?direction=request") → hook tools ("server/tool")'),
    // Go nanobot descriptive fields.
    name: str().optional(),
    shortName: str().optional(),
    description: str().optional(),
    icon: str().optional(),
  })
  .describe("An MCP server: a command to spawn (stdio) or a URL (Streamable HTTP / SSE)");

export const mcpServersSchema = z.record(z.string(), mcpServerSchema);

/** How nanobot behaves as an MCP host, across all servers. */
export const mcpHostSchema = z.strictObject({
  elicitation: oneOf(["decline", "defaults"] as const)
    .default("decline")
    .describe(
      "A server's question when nobody can answer it (agent -m, chat channels, cron): decline, or accept with the form's defaults when every required field has one",
    ),
});

export const execToolSchema = z.strictObject({
  enable: bool().default(true),
  timeout: nonNegativeInt().default(60).describe("Seconds a command may run when the model names no timeout; 0 = no limit; may exceed 600 (the cap on the model's own timeout)"),
  allowPatterns: stringArray().default([]),
  denyPatterns: stringArray().default([]),
  pathAppend: str().optional(),
  pathPrepend: str().optional().describe("Put before PATH for commands (the Python nanobot's key)"),
  // "" is the Python template's unset value; true/false are read as "bwrap"/"none".
  sandbox: z
    .union([z.enum(["auto", "bwrap", "none", ""]), z.boolean()], { error: 'expected "auto", "bwrap" or "none"' })
    .transform((v): "auto" | "bwrap" | "none" => (v === true ? "bwrap" : v === false ? "none" : v === "" ? "auto" : v))
    .default("auto")
    .describe('"auto": bubblewrap when it works here; "bwrap": required; "none": no sandbox'),
  network: bool().default(false).describe("Sandboxed commands may use the network"),
  allowedEnvKeys: stringArray()
    .default([])
    .refine((keys) => keys.every((k) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(k)), { error: "expected environment variable names" })
    .refine((keys) => !keys.some(isProviderKey), { error: "expected variable names that are not provider keys (a *_API_KEY never reaches a command)" })
    .describe("Variables passed to commands besides PATH, HOME, LANG, TERM"),
});

export const webSearchSchema = z.looseObject({
  provider: str().optional(),
  apiKey: str().optional(),
  baseUrl: str().optional(),
  maxResults: positiveInt().default(5),
  timeout: positiveInt().optional().describe("Seconds before a search gives up (default 30)"),
});

export const webToolSchema = z.strictObject({
  enable: bool().default(true),
  proxy: str().optional(),
  userAgent: str().optional().describe("The User-Agent web_fetch sends"),
  search: webSearchSchema.default(() => webSearchSchema.parse({})),
  fetch: z.looseObject({}).optional(),
});

export const toolsSchema = z.strictObject({
  restrictToWorkspace: bool().default(false),
  exec: execToolSchema.default(() => execToolSchema.parse({})),
  web: webToolSchema.default(() => webToolSchema.parse({})),
  ssrfWhitelist: stringArray().default([]),
  mcpServers: mcpServersSchema.optional().describe("Python nanobot location; merged into the top-level mcpServers"),
});

export type McpOAuthConfig = z.output<typeof mcpOAuthSchema>;
export type McpServerConfig = z.output<typeof mcpServerSchema>;
export type ToolsConfig = z.output<typeof toolsSchema>;
