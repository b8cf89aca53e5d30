export type {
  AssistantContentPart,
  AssistantMessage,
  ContentPart,
  FilePart,
  FinishReason,
  ImagePart,
  Message,
  MessageMeta,
  ReasoningPart,
  ResourceLinkPart,
  ResourcePart,
  Role,
  StopReason,
  SystemMessage,
  TextPart,
  ToolCallPart,
  ToolMessage,
  ToolResultContentPart,
  ToolResultPart,
  UIPart,
  Usage,
  UserContentPart,
  UserMessage,
} from "./messages.js";
export type { AgentEvent, AgentStream, Checkpoint, CheckpointPhase, RunResult } from "./events.js";
export { agentErrorEvent } from "./events.js";
export type {
  JsonSchema,
  LanguageModel,
  LLMRequest,
  ModelEvent,
  ModelResponse,
  ModelStream,
  ReasoningEffort,
  ToolChoice,
  ToolDefinition,
} from "./llm.js";
export { complete, modelErrorEvent } from "./llm.js";
export { EventStream } from "./event-stream.js";
export {
  AbortedError,
  ConfigError,
  ContextOverflowError,
  NanobotError,
  ProviderError,
  ToolTimeoutError,
  errorMessage,
  isAbortError,
  throwIfAborted,
} from "./errors.js";
export type { ProviderErrorDetails, ProviderErrorKind } from "./errors.js";
export { messageId, newId, runId, toolCallId, turnId } from "./ids.js";
export {
  assistantMessage,
  reasoningOf,
  systemMessage,
  textOf,
  toolCallsOf,
  toolMessage,
  userMessage,
} from "./message-helpers.js";
export { createLogger, silentLogger, SECRET_KEYS } from "./logger.js";
export type { Logger, LoggerOptions, LogLevel } from "./logger.js";
