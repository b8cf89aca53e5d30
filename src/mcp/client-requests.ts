/**
 * Requests servers send to us: sampling, elicitation and roots. Each capability is advertised
 * only when the host gave us a way to answer it, so servers never ask for what we cannot do.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type {
  ClientCapabilities,
  CreateMessageRequest,
  CreateMessageResult,
  ElicitResult,
  SamplingMessage,
} from "@modelcontextprotocol/sdk/types.js";
import { messageId } from "../core/ids.js";
import type { AssistantContentPart, Message, UserContentPart } from "../core/messages.js";
import type { McpManagerOptions } from "./types.js";

type HostRequestOptions = Pick<McpManagerOptions, "sampling" | "elicitation" | "roots">;

export function clientCapabilities(options: HostRequestOptions): ClientCapabilities {
  return {
    ...(options.sampling ? { sampling: {} } : {}),
    ...(options.elicitation ? { elicitation: { form: {}, url: {} } } : {}),
    ...(options.roots ? { roots: { listChanged: false } } : {}),
  };
}

type SamplingBlock = Exclude<SamplingMessage["content"], unknown[]>;

function samplingBlocks(content: SamplingMessage["content"]): SamplingBlock[] {
  return Array.isArray(content) ? (content as SamplingBlock[]) : [content];
}

/** Sampling messages as core messages; only text and images carry over (audio and tool blocks are dropped). */
export function samplingMessages(messages: SamplingMessage[]): Message[] {
  return messages.map((m): Message => {
    const parts: (UserContentPart & AssistantContentPart)[] = [];
    const images: UserContentPart[] = [];
    for (const block of samplingBlocks(m.content)) {
      if (block.type === "text") parts.push({ type: "text", text: block.text });
      else if (block.type === "image") images.push({ type: "image", mimeType: block.mimeType, data: block.data });
    }
    if (m.role === "assistant") return { role: "assistant", id: messageId(), content: parts };
    return { role: "user", id: messageId(), content: [...parts, ...images] };
  });
}

function toSamplingRequest(server: string, params: CreateMessageRequest["params"]) {
  const hints = (params.modelPreferences?.hints ?? []).map((h) => h.name).filter((n): n is string => typeof n === "string");
  return {
    server,
    messages: samplingMessages(params.messages),
    ...(params.systemPrompt ? { systemPrompt: params.systemPrompt } : {}),
    maxTokens: params.maxTokens,
    ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
    ...(params.stopSequences ? { stopSequences: params.stopSequences } : {}),
    modelHints: hints,
  };
}

/** What the connection knows while a server request is handled. */
export interface ConnectionState {
  /** Session keys of the tool calls in flight on this server (who may be asked). */
  callers(): string[];
  /** Stops the in-flight calls' timeouts while the user answers; returns the release. */
  holdCallTimers(): () => void;
}

const NO_STATE: ConnectionState = { callers: () => [], holdCallTimers: () => () => undefined };

export function registerClientRequestHandlers(client: Client, server: string, options: HostRequestOptions, state: ConnectionState = NO_STATE): void {
  const { sampling, elicitation, roots } = options;
  if (sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra): Promise<CreateMessageResult> => {
      const answer = await sampling(toSamplingRequest(server, request.params), extra.signal);
      return {
        role: "assistant",
        content: { type: "text", text: answer.text },
        model: answer.model,
        ...(answer.stopReason ? { stopReason: answer.stopReason } : {}),
      };
    });
  }
  if (elicitation) {
    client.setRequestHandler(ElicitRequestSchema, async (request, extra): Promise<ElicitResult> => {
      const p = request.params;
      const callers = state.callers();
      const release = state.holdCallTimers();
      try {
        const answer =
          p.mode === "url"
            ? await elicitation({ server, message: p.message, mode: "url", url: p.url, callers }, extra.signal)
            : await elicitation({ server, message: p.message, mode: "form", requestedSchema: p.requestedSchema, callers }, extra.signal);
        return answer.action === "accept" ? { action: "accept", ...(answer.content ? { content: answer.content } : {}) } : { action: answer.action };
      } finally {
        release();
      }
    });
  }
  if (roots) {
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: roots.map((r) => ({ uri: r.uri, ...(r.name ? { name: r.name } : {}) })),
    }));
  }
}
