/**
 * Parses an OpenAI Chat Completions request into what a turn needs: the agent, the session
 * and the new input. The session holds the history, so only the last user message is new; or,
 * when the request ends with `tool` messages after the last assistant message, those are the
 * client's results for its own tools and resume the turn that handed it the calls. The
 * client's `tools[]` are offered to the model as external tools.
 */
import { z } from "zod";
import type { ToolDefinition } from "../core/llm.js";
import type { UserContentPart } from "../core/messages.js";
import { apiSessionKey } from "../session/keys.js";
import { ApiError } from "./errors.js";

const contentPartSchema = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  image_url: z.union([z.string(), z.looseObject({ url: z.string() })]).optional(),
});

const messageSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(contentPartSchema), z.null()]).optional(),
  tool_call_id: z.string().optional(),
});

const toolSchema = z.looseObject({
  type: z.literal("function"),
  function: z.looseObject({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "a function name of letters, digits, _ and - (at most 64)"),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

const requestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(messageSchema).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  session_id: z.string().min(1).max(200).nullish(),
  tools: z.array(toolSchema).nullish(),
});

export interface ChatTurnInput {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  sessionKey: string;
  content: string | UserContentPart[];
  /** The client's own tools (`tools[]`), offered to the model beside the agent's. */
  externalTools: ToolDefinition[];
  /** The client's results for the calls it was handed: the turn resumes from them. */
  toolResults?: Array<{ toolCallId: string; content: string }>;
}

type ChatRequest = z.output<typeof requestSchema>;

export function parseChatRequest(body: unknown, sessionHeader: string | undefined): ChatTurnInput {
  const req = plainChatRequest(body) ?? validated(body);
  const sessionId = req.session_id ?? (sessionHeader?.trim() || undefined);
  const base = {
    model: req.model,
    stream: req.stream === true,
    includeUsage: req.stream_options?.include_usage === true,
    sessionKey: apiSessionKey(sessionId),
    externalTools: (req.tools ?? []).map(
      (t): ToolDefinition => ({
        name: t.function.name,
        description: t.function.description ?? "",
        parameters: (t.function.parameters as ToolDefinition["parameters"] | undefined) ?? { type: "object", properties: {} },
      }),
    ),
  };
  const toolResults = trailingToolResults(req.messages);
  if (toolResults) return { ...base, content: "", toolResults };
  const last = [...req.messages].reverse().find((m) => m.role === "user");
  const content = last ? userContent(last.content) : undefined;
  if (!content || (typeof content === "string" && content.trim() === "") || (Array.isArray(content) && content.length === 0)) {
    throw new ApiError(400, "messages must contain a user message with content", "invalid_request_error", null, "messages");
  }
  return { ...base, content };
}

type WireMessage = z.output<typeof messageSchema>;

/** The schema's verdict: the parsed request, or the 400 naming the first problem. */
function validated(body: unknown): ChatRequest {
  const parsed = requestSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const param = issue?.path.join(".") || null;
  throw new ApiError(400, `Invalid request: ${param ?? "body"}: ${issue?.message ?? "malformed"}`, "invalid_request_error", null, param);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The common request (text messages, no tools, no stream options) checked by hand: every value
 * it accepts the schema accepts unchanged, and anything else (content parts, tools, a wrong
 * type) goes to the schema, which also words the errors. The schema costs ~0.1 ms per request.
 */
function plainChatRequest(body: unknown): ChatRequest | undefined {
  if (!isPlainObject(body)) return undefined;
  const { model, messages, stream, stream_options: streamOptions, session_id: sessionId, tools } = body;
  if (typeof model !== "string" || model.length === 0 || !Array.isArray(messages) || messages.length === 0) return undefined;
  if (stream !== undefined && stream !== null && typeof stream !== "boolean") return undefined;
  if ((streamOptions !== undefined && streamOptions !== null) || (tools !== undefined && tools !== null)) return undefined;
  if (sessionId !== undefined && sessionId !== null && (typeof sessionId !== "string" || sessionId.length === 0 || sessionId.length > 200)) return undefined;
  for (const m of messages as unknown[]) {
    if (!isPlainObject(m) || typeof m.role !== "string") return undefined;
    if (m.content !== undefined && m.content !== null && typeof m.content !== "string") return undefined;
    if (m.tool_call_id !== undefined && typeof m.tool_call_id !== "string") return undefined;
  }
  return body as ChatRequest;
}

/** The `tool` messages after the last assistant message, when the request ends with them. */
function trailingToolResults(messages: readonly WireMessage[]): Array<{ toolCallId: string; content: string }> | undefined {
  if (messages.at(-1)?.role !== "tool") return undefined;
  const tail: WireMessage[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]!.role === "tool"; i--) tail.unshift(messages[i]!);
  return tail.map((m, i) => {
    if (!m.tool_call_id) throw new ApiError(400, "a tool message needs tool_call_id", "invalid_request_error", null, `messages.${messages.length - tail.length + i}.tool_call_id`);
    const text = typeof m.content === "string" ? m.content : (m.content ?? []).map((p) => p.text ?? "").join("");
    return { toolCallId: m.tool_call_id, content: text };
  });
}

type WireContent = WireMessage["content"];

/** A plain string stays a string; parts become text and image parts. */
function userContent(content: WireContent): string | UserContentPart[] | undefined {
  if (content === null || content === undefined) return undefined;
  if (typeof content === "string") return content;
  const parts: UserContentPart[] = [];
  for (const p of content) {
    if (p.type === "text" && p.text !== undefined) parts.push({ type: "text", text: p.text });
    else if (p.type === "image_url" && p.image_url !== undefined) {
      const url = typeof p.image_url === "string" ? p.image_url : p.image_url.url;
      const mime = /^data:([^;,]+)/.exec(url)?.[1] ?? "image/*";
      parts.push({ type: "image", mimeType: mime, url });
    }
  }
  const onlyText = parts.every((p) => p.type === "text");
  return onlyText ? parts.map((p) => (p.type === "text" ? p.text : "")).join("\n") : parts;
}
