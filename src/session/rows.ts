/**
 * Translation between core `Message`s and `messages` table rows. Tool calls and reasoning text
 * get their own columns so the database stays inspectable with plain SQL; everything else a
 * message carries goes into `content` (parts), `flags` (meta) and `attrs` (role extras).
 * `tokens` and `token_basis` keep the message's exact token count when it was known at write
 * time (see core/token-counts.ts); a message read back carries it beside it.
 */
import type {
  AssistantContentPart,
  AssistantMessage,
  ContentPart,
  FinishReason,
  Message,
  MessageMeta,
  ToolCallPart,
  Usage,
} from "../core/index.js";
import { attachTokenCount } from "../core/token-counts.js";
import type { MessageTokenCounter } from "../core/token-counts.js";

export interface MessageRow {
  id: string;
  thread_id: string;
  seq: number;
  role: Message["role"];
  content: string;
  tool_calls: string | null;
  tool_call_id: string | null;
  tool_name: string | null;
  reasoning: string | null;
  usage: string | null;
  created_at: number;
  turn_id: string | null;
  flags: string | null;
  attrs: string | null;
  /** The exact token count under `token_basis`; both null when it was not known at write time. */
  tokens: number | null;
  token_basis: string | null;
}

/** Role-specific fields that have no column of their own. */
interface Attrs {
  provider?: string;
  model?: string;
  finishReason?: FinishReason;
  isError?: boolean;
  /** Tool calls are interleaved with other parts; `content` then holds every part in order. */
  inlineCalls?: boolean;
}

export function messageToRow(
  message: Message,
  threadId: string,
  seq: number,
  turnId: string | null,
  countTokens?: MessageTokenCounter,
): MessageRow {
  const toolCalls: ToolCallPart[] = [];
  let parts: ContentPart[] = message.content;
  let reasoning: string | null = null;
  let usage: Usage | undefined;
  const attrs: Attrs = {};
  if (message.role === "assistant") {
    // One pass in plain loops: every stored message comes through here.
    const content = message.content;
    let firstCall = -1;
    let textAfterCall = false;
    let text = "";
    for (let i = 0; i < content.length; i++) {
      const part = content[i]!;
      if (part.type === "toolCall") {
        toolCalls.push(part);
        if (firstCall < 0) firstCall = i;
      } else {
        if (firstCall >= 0) textAfterCall = true;
        if (part.type === "reasoning") text += part.text;
      }
    }
    // Canonical: every tool call after every other part; `content` then leaves the calls out.
    if (textAfterCall) attrs.inlineCalls = true;
    else if (firstCall >= 0) parts = content.slice(0, firstCall);
    reasoning = text || null;
    usage = message.usage;
    if (message.provider !== undefined) attrs.provider = message.provider;
    if (message.model !== undefined) attrs.model = message.model;
    if (message.finishReason !== undefined) attrs.finishReason = message.finishReason;
  } else if (message.role === "tool") {
    attrs.isError = message.isError;
  }
  return {
    id: message.id,
    thread_id: threadId,
    seq,
    role: message.role,
    content: JSON.stringify(parts),
    tool_calls: toolCalls.length ? JSON.stringify(toolCalls) : null,
    tool_call_id: message.role === "tool" ? message.toolCallId : null,
    tool_name: message.role === "tool" ? message.toolName : null,
    reasoning,
    usage: usage ? JSON.stringify(usage) : null,
    created_at: message.createdAt ?? Date.now(),
    turn_id: turnId,
    flags: message.meta && Object.keys(message.meta).length ? JSON.stringify(message.meta) : null,
    attrs: Object.keys(attrs).length ? JSON.stringify(attrs) : null,
    ...tokenColumns(countTokens?.(message)),
  };
}

function tokenColumns(count: { basis: string; tokens: number } | undefined): Pick<MessageRow, "tokens" | "token_basis"> {
  return count ? { tokens: count.tokens, token_basis: count.basis } : { tokens: null, token_basis: null };
}

/** A row to insert as it is (a copied or imported one), with the columns older rows lack. */
export function completeRow(row: MessageRow): MessageRow {
  return row.tokens === undefined || row.token_basis === undefined ? { ...row, tokens: row.tokens ?? null, token_basis: row.token_basis ?? null } : row;
}

function parseJson<T>(text: string | null): T | undefined {
  return text === null ? undefined : (JSON.parse(text) as T);
}

export function rowToMessage(row: MessageRow): Message {
  const message = messageOfRow(row);
  if (row.tokens !== null && row.tokens !== undefined && row.token_basis) attachTokenCount(message, { basis: row.token_basis, tokens: Number(row.tokens) });
  return message;
}

function messageOfRow(row: MessageRow): Message {
  // Object literals in the key order of the old spread form ({ id, createdAt, meta?, role, … }):
  // every replayed history row passes here, and literals are cheaper than spreads.
  const meta = row.flags === null ? undefined : (JSON.parse(row.flags) as MessageMeta);
  const id = row.id;
  const createdAt = row.created_at;
  switch (row.role) {
    case "system": {
      const content = JSON.parse(row.content) as Extract<Message, { role: "system" }>["content"];
      return meta ? { id, createdAt, meta, role: "system", content } : { id, createdAt, role: "system", content };
    }
    case "user": {
      const content = JSON.parse(row.content) as Extract<Message, { role: "user" }>["content"];
      return meta ? { id, createdAt, meta, role: "user", content } : { id, createdAt, role: "user", content };
    }
    case "tool": {
      const attrs = parseJson<Attrs>(row.attrs);
      const content = JSON.parse(row.content) as Extract<Message, { role: "tool" }>["content"];
      const toolCallId = row.tool_call_id ?? "";
      const toolName = row.tool_name ?? "";
      const isError = attrs?.isError ?? false;
      return meta
        ? { id, createdAt, meta, role: "tool", toolCallId, toolName, content, isError }
        : { id, createdAt, role: "tool", toolCallId, toolName, content, isError };
    }
    case "assistant": {
      const attrs = parseJson<Attrs>(row.attrs);
      const parts = JSON.parse(row.content) as AssistantContentPart[];
      const content = row.tool_calls === null || attrs?.inlineCalls ? parts : [...parts, ...(JSON.parse(row.tool_calls) as ToolCallPart[])];
      const message: AssistantMessage = meta ? { id, createdAt, meta, role: "assistant", content } : { id, createdAt, role: "assistant", content };
      const usage = parseJson<Usage>(row.usage);
      if (usage) message.usage = usage;
      if (attrs) {
        if (attrs.provider !== undefined) message.provider = attrs.provider;
        if (attrs.model !== undefined) message.model = attrs.model;
        if (attrs.finishReason !== undefined) message.finishReason = attrs.finishReason;
      }
      return message;
    }
  }
}

export const MESSAGE_COLUMNS =
  "id, thread_id, seq, role, content, tool_calls, tool_call_id, tool_name, reasoning, usage, created_at, turn_id, flags, attrs, tokens, token_basis";
export const MESSAGE_PARAMS =
  "@id, @thread_id, @seq, @role, @content, @tool_calls, @tool_call_id, @tool_name, @reasoning, @usage, @created_at, @turn_id, @flags, @attrs, @tokens, @token_basis";

/** A row as `SELECT ${MESSAGE_COLUMNS}` returns it in raw mode (values in column order). */
export type RawMessageRow = [
  id: string,
  thread_id: string,
  seq: number,
  role: Message["role"],
  content: string,
  tool_calls: string | null,
  tool_call_id: string | null,
  tool_name: string | null,
  reasoning: string | null,
  usage: string | null,
  created_at: number,
  turn_id: string | null,
  flags: string | null,
  attrs: string | null,
  tokens: number | null,
  token_basis: string | null,
];

export function rowFromRaw(r: RawMessageRow): MessageRow {
  return {
    id: r[0],
    thread_id: r[1],
    seq: r[2],
    role: r[3],
    content: r[4],
    tool_calls: r[5],
    tool_call_id: r[6],
    tool_name: r[7],
    reasoning: r[8],
    usage: r[9],
    created_at: r[10],
    turn_id: r[11],
    flags: r[12],
    attrs: r[13],
    tokens: r[14],
    token_basis: r[15],
  };
}
