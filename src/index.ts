/**
 * The library surface of nanobot: the engine, providers, tools, MCP host, sessions and the
 * vocabulary they share. The CLI and gateway are built from the same parts.
 */
export {
  AbortedError,
  ConfigError,
  ContextOverflowError,
  EventStream,
  NanobotError,
  ProviderError,
  ToolTimeoutError,
  assistantMessage,
  complete,
  createLogger,
  systemMessage,
  textOf,
  toolCallsOf,
  toolMessage,
  userMessage,
} from "./core/index.js";
export type {
  AgentEvent,
  AgentStream,
  AssistantMessage,
  Checkpoint,
  ContentPart,
  LanguageModel,
  LLMRequest,
  Logger,
  Message,
  ModelEvent,
  ModelResponse,
  RunResult,
  StopReason,
  ToolCallPart,
  ToolDefinition,
  ToolMessage,
  Usage,
  UserMessage,
} from "./core/index.js";
export { runAgent, governContext, ToolRegistry } from "./engine/index.js";
export type { AgentHooks, AgentSpec } from "./engine/index.js";
export { createProviderRegistry, withFallback, withRetry } from "./providers/index.js";
export type { ProviderRegistry } from "./providers/index.js";
export { createBuiltinTools, defineTool } from "./tools/index.js";
export type { Tool, ToolContext, ToolOutput } from "./tools/index.js";
export { McpClientManager, selectTools } from "./mcp/index.js";
export { SqliteSessionStore } from "./session/index.js";
export type { SessionStore } from "./session/index.js";
export { loadConfig } from "./config/index.js";
export type { NanobotConfig } from "./config/index.js";
export { InProcessBus } from "./bus/index.js";
export type { InboundMessage, MessageBus, OutboundMessage } from "./bus/index.js";
