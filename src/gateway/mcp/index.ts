/** nanobot as an MCP server: published agents as `chat-with-<agent>` tools, over HTTP and stdio. */
export { createMcpHttpHandler, createProfileHttpHandler, jsonRpcError } from "./http-handler.js";
export type { McpHttpDeps, McpHttpHandler, McpHttpOptions } from "./http-handler.js";
export { serveMcpStdio } from "./stdio.js";
export type { StdioServeOptions, StdioServerHandle } from "./stdio.js";
export { chatProfile, HISTORY_URI, PROGRESS_URI } from "./chat-profile.js";
export type { McpLogFn, McpServerDeps } from "./chat-profile.js";
export { ProgressBoard } from "./chat-progress.js";
export type { ChatProgress, ToolActivity } from "./chat-progress.js";
export { chatToolName, DEFAULT_AGENT, publishedAgents } from "./published-agents.js";
export type { PublishedAgent } from "./published-agents.js";
export { hostnameOf, rejectedHost } from "../host-check.js";
export type { HostPolicy } from "../host-check.js";
export { buildMcpServer, mcpSessionKey } from "./server-profile.js";
export type {
  CallScope,
  HandlerExtra,
  ServedPrompt,
  ServedResource,
  ServedResourceTemplate,
  ServedTool,
  ServerProfile,
} from "./server-profile.js";
