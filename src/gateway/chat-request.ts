/**
 * Parses an OpenAI Chat Completions request into what a turn needs: the agent, the session
 * and the new user input. The session holds the history, so only the last user message is new.
 */
import { z } from "zod";
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
});

const requestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(messageSchema).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullish(),
  session_id: z.string().min(1).max(200).nullish(),
});

export interface ChatTurnInput {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  sessionKey: string;
  content: string | UserContentPart[];
}

export function parseChatRequest(body: unknown, sessionHeader: string | undefined): ChatTurnInput {
  const parsed = requestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = issue?.path.join(".") || null;
    throw new ApiError(400, `Invalid request: ${param ?? "body"}: ${issue?.message ?? "malformed"}`, "invalid_request_error", null, param);
  }
  const req = parsed.data;
  const last = [...req.messages].reverse().find((m) => m.role === "user");
  const content = last ? userContent(last.content) : undefined;
  if (!content || (typeof content === "string" && content.trim() === "") || (Array.isArray(content) && content.length === 0)) {
    throw new ApiError(400, "messages must contain a user message with content", "invalid_request_error", null, "messages");
  }
  const sessionId = req.session_id ?? (sessionHeader?.trim() || undefined);
  return {
    model: req.model,
    stream: req.stream === true,
    includeUsage: req.stream_options?.include_usage === true,
    sessionKey: apiSessionKey(sessionId),
    content,
  };
}

type WireContent = z.output<typeof messageSchema>["content"];

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
