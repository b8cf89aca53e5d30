/**
 * The message vocabulary shared by every layer. Adapters (providers, MCP, channels, storage)
 * translate to and from these types at their edges; nothing inside speaks a wire format.
 */

/** Plain text. */
export interface TextPart {
  type: "text";
  text: string;
}

/** An image, inline (base64 `data`) or by `url` (http(s) or data: URL). */
export interface ImagePart {
  type: "image";
  mimeType: string;
  data?: string;
  url?: string;
}

/** A file attachment (PDF, text, …) inline, by URL or by local path. */
export interface FilePart {
  type: "file";
  mimeType: string;
  name?: string;
  data?: string;
  url?: string;
  path?: string;
}

/**
 * Model reasoning. `signature` (Anthropic thinking) and `providerData` (OpenAI Responses
 * reasoning items) must be sent back unchanged on the next request of the same provider.
 */
export interface ReasoningPart {
  type: "reasoning";
  text: string;
  signature?: string;
  redacted?: boolean;
  providerData?: Record<string, unknown>;
}

/** A tool call requested by the model. `arguments` is the parsed (possibly repaired) object. */
export interface ToolCallPart {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** The arguments exactly as the model produced them. */
  rawArguments: string;
  /** Set when `rawArguments` could not be parsed or repaired; the call becomes an error result. */
  parseError?: string;
}

/** The outcome of a tool call, as carried inside other content (e.g. MCP results, events). */
export interface ToolResultPart {
  type: "toolResult";
  toolCallId: string;
  content: ContentPart[];
  isError: boolean;
}

/** An embedded MCP resource (text or base64 blob). */
export interface ResourcePart {
  type: "resource";
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
}

/** A link to an MCP resource the model may read later. */
export interface ResourceLinkPart {
  type: "resourceLink";
  uri: string;
  name?: string;
  mimeType?: string;
  description?: string;
}

/** An MCP-UI resource to render in a capable face (web UI); other faces ignore it. */
export interface UIPart {
  type: "ui";
  uri: string;
  mimeType: string;
  content: string;
}

export type ContentPart =
  | TextPart
  | ImagePart
  | FilePart
  | ReasoningPart
  | ToolCallPart
  | ToolResultPart
  | ResourcePart
  | ResourceLinkPart
  | UIPart;

export type UserContentPart = TextPart | ImagePart | FilePart | ResourcePart | ResourceLinkPart;
export type AssistantContentPart = TextPart | ReasoningPart | ToolCallPart | UIPart;
export type ToolResultContentPart =
  | TextPart
  | ImagePart
  | FilePart
  | ResourcePart
  | ResourceLinkPart
  | UIPart;

/** Free-form annotations that travel with a message (e.g. `injected`, `command`, `summary`). */
export type MessageMeta = Record<string, unknown>;

interface MessageBase {
  /** Stable id; storage and governance key on it. */
  id: string;
  /** Epoch milliseconds. */
  createdAt?: number;
  meta?: MessageMeta;
}

export interface SystemMessage extends MessageBase {
  role: "system";
  content: TextPart[];
}

export interface UserMessage extends MessageBase {
  role: "user";
  content: UserContentPart[];
}

export interface AssistantMessage extends MessageBase {
  role: "assistant";
  content: AssistantContentPart[];
  /** Which provider/model produced it; reasoning parts are only replayed to the same one. */
  provider?: string;
  model?: string;
  usage?: Usage;
  finishReason?: FinishReason;
}

/** The answer to one tool call. Exactly one per call id in a legal history. */
export interface ToolMessage extends MessageBase {
  role: "tool";
  toolCallId: string;
  toolName: string;
  content: ToolResultContentPart[];
  isError: boolean;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;
export type Role = Message["role"];

/** Token accounting. Missing numbers are 0; `cachedTokens` is the part of prompt tokens read from cache. */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
  reasoningTokens?: number;
}

/** Why the model stopped generating, mapped from each wire API. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "error";

/** Why a run ended. */
export type StopReason =
  | "completed"
  | "max_iterations"
  | "length"
  | "empty_final_response"
  | "tool_error"
  | "error"
  | "aborted"
  | "external_tool";
