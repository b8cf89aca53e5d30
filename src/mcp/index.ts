export { McpClientManager } from "./manager.js";
export type { ManagerCallOptions } from "./manager.js";
export { McpConnection } from "./connection.js";
export type { CallOptions, ProgressFn, ServerListing } from "./connection.js";
export type {
  ElicitationHandler,
  ElicitationRequest,
  ElicitationResponse,
  McpLogFn,
  McpManagerOptions,
  McpRoot,
  McpServerFailure,
  McpServerSpec,
  McpServersConfig,
  McpTransportType,
  SamplingHandler,
  SamplingRequest,
  SamplingResponse,
} from "./types.js";
export { MAX_TOOL_NAME_LENGTH, fitToolName, mcpToolName, parseToolRef, sanitizeName } from "./names.js";
export type { McpToolKind, ToolRef } from "./names.js";
export { detectTransportType, expandVars } from "./server-spec.js";
export { selectTools } from "./select-tools.js";
export type { SelectedTools } from "./select-tools.js";
export { DEFAULT_TOOL_TIMEOUT_MS, isToolEnabled } from "./tool-adapters.js";
export type { McpToolEntry } from "./tool-adapters.js";
export { mapCallToolResult, mapContentBlock, promptText } from "./result-mapping.js";
export { hookRefs, mcpHooks, runHookChain, toModelResponse } from "./hooks.js";
export type { HookChainResult, HookKind, HookPayload, HooksConfig, McpHooksOptions } from "./hooks.js";
export { expandPromptAction, parseUiAction, resolveActionTool } from "./ui-actions.js";
export type { UiAction } from "./ui-actions.js";
export { resolvePromptInstructions } from "./instructions.js";
export type { PromptInstructions } from "./instructions.js";
export { ELICITATION_TIMEOUT_MS, ElicitationRouter } from "./elicitation-router.js";
export type { ElicitationAsker, ElicitationRouterOptions } from "./elicitation-router.js";
export { describeProblems, fieldProblem, formFields, parseFieldInput, validateElicitationContent } from "./elicitation-schema.js";
export type { ElicitField, ElicitOption, ElicitValue, FieldProblem } from "./elicitation-schema.js";
export { BoundedStdioClientTransport, MAX_STDIO_MESSAGE_BYTES } from "./stdio-transport.js";
export { listServers } from "./list-servers.js";
export type { ListedServer, ListedTool } from "./list-servers.js";
