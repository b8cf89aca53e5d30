/**
 * `/v1/models` and `/v1/chat/completions`: nanobot's agents behind the OpenAI API. `model`
 * names the agent; the session (`api:<session_id>`) holds the history.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { SSEStreamingApi } from "hono/streaming";
import type { TurnReply, TurnRequest } from "../agent/turn-processor.js";
import type { AgentEvent } from "../core/events.js";
import type { ActiveTurns } from "./active-turns.js";
import { parseChatRequest } from "./chat-request.js";
import type { ChatTurnInput } from "./chat-request.js";
import { ApiError, modelNotFound, timedOut } from "./errors.js";
import {
  completionId,
  completionObject,
  contentChunk,
  finishChunk,
  finishReasonFor,
  nowSeconds,
  roleChunk,
  toolCallsChunk,
  usageChunk,
  withWarnings,
} from "./openai-format.js";
import type { CompletionMeta } from "./openai-format.js";
import { IdempotentRequests, idempotencyKeyOf, requestFingerprint } from "./idempotency.js";
import { runGatewayTurn } from "./run-turn.js";
import type { GatewayTurnResult } from "./run-turn.js";
import { serverTiming } from "./server-timing.js";
import { DEFAULT_AGENT, DEFAULT_TIMEOUT_MS } from "./types.js";
import type { GatewayDeps } from "./types.js";

/** Every model name the API accepts: `nanobot` first, then the named agents. */
export function modelNames(deps: GatewayDeps): string[] {
  return [DEFAULT_AGENT, ...deps.agents.filter((a) => a !== DEFAULT_AGENT)];
}

/**
 * Runs the request's turn; with an `Idempotency-Key`, at most once per key and session (a repeat
 * gets the first answer). A keyed turn is not stopped when its client goes away: the client's
 * retry is meant to collect its answer.
 */
type TurnRunner = (options: { signal?: AbortSignal; onEvent?: (event: AgentEvent) => void }) => Promise<GatewayTurnResult & { replayed?: boolean }>;

export function openAIRoutes(deps: GatewayDeps, turns: ActiveTurns): Hono {
  const app = new Hono();
  const created = nowSeconds();
  const idempotent = new IdempotentRequests(deps.store);

  app.get("/models", (c) =>
    c.json({
      object: "list",
      data: modelNames(deps).map((id) => ({ id, object: "model", created, owned_by: "nanobot" })),
    }),
  );

  app.post("/chat/completions", async (c) => {
    const started = performance.now();
    const body: unknown = await c.req.json().catch(() => {
      throw new ApiError(400, "Request body is not valid JSON", "invalid_request_error");
    });
    const input = parseChatRequest(body, c.req.header("x-session-id"));
    const known = modelNames(deps);
    if (!known.includes(input.model)) throw modelNotFound(input.model, known);
    const meta: CompletionMeta = { id: completionId(), created: nowSeconds(), model: input.model };
    const key = idempotencyKeyOf(c.req.header("idempotency-key"));
    const request = turnRequest(input);
    const run: TurnRunner =
      key === undefined
        ? (options) => runGatewayTurn(deps, turns, request, options)
        : (options) =>
            idempotent.run(input.sessionKey, key, requestFingerprint(body), (keyed) =>
              runGatewayTurn(deps, turns, { ...request, messageId: keyed.messageId, ...(keyed.resume ? { resumeMessageId: keyed.messageId } : {}) }, { ...options, signal: undefined }),
            );
    return input.stream ? streamCompletion(c, deps, input, meta, run) : completeOnce(c, deps, meta, started, run);
  });

  return app;
}

function turnRequest(input: ChatTurnInput): TurnRequest {
  return {
    sessionKey: input.sessionKey,
    content: input.content,
    agent: input.model === DEFAULT_AGENT ? undefined : input.model,
    channel: "api",
    ...(input.externalTools.length > 0 ? { externalTools: input.externalTools } : {}),
    ...(input.toolResults ? { toolResults: input.toolResults } : {}),
  };
}

async function completeOnce(c: Context, deps: GatewayDeps, meta: CompletionMeta, started: number, run: TurnRunner): Promise<Response> {
  const warnings = new TurnWarnings();
  const { reply, timedOut: late, replayed } = await run({ signal: c.req.raw.signal, onEvent: warnings.onEvent });
  if (replayed) c.header("idempotent-replayed", "true");
  if (late) throw timedOut(deps.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS);
  throwIfFailed(reply);
  c.header("server-timing", serverTiming(reply.timings, performance.now() - started));
  const body = completionObject(meta, reply.content, finishReasonFor(reply.stopReason), reply.usage, reply.externalToolCalls);
  return c.json(withWarnings(body, warnings.of(reply)));
}

/**
 * A failed or stopped turn is an error for an API client, in OpenAI's shape. Only a provider
 * failure is a 502 (bad gateway); a broken configuration or a failure inside nanobot is a 500
 * that says so, so the client does not blame (or retry against) the model.
 */
function throwIfFailed(reply: TurnReply): void {
  if (reply.interrupted) {
    throw new ApiError(503, `The turn was interrupted: ${reply.error ?? "the session store was lost"}. Its message is kept: send the request again with the same Idempotency-Key to resume it.`, "server_error", "interrupted");
  }
  if (reply.error !== undefined || reply.stopReason === "error") {
    const reason = reply.error ?? "unknown error";
    switch (reply.errorKind) {
      case "config":
        throw new ApiError(500, `nanobot's configuration cannot run this turn: ${reason}`, "server_error", "configuration_error");
      case "request":
        throw new ApiError(400, `Invalid request: ${reason}`, "invalid_request_error", null, "messages");
      case "conflict":
        throw new ApiError(409, `This request's earlier attempt cannot be resumed: ${reason}. Its message is kept in the session; send a new Idempotency-Key to ask again.`, "invalid_request_error", "turn_not_resumable");
      case "internal":
        throw new ApiError(500, `The turn failed inside nanobot, not at the model provider: ${reason}`, "server_error", "internal_error");
      default:
        // "provider", or an engine-ended error from a processor that does not classify it.
        throw new ApiError(502, `The model provider failed: ${reason}`, "server_error", "upstream_error");
    }
  }
  if (reply.stopReason === "aborted") throw new ApiError(503, "The turn was stopped before it finished", "server_error", "stopped");
}

/** The turn's `warning` events and its reply's `warnings`, each once, in the order they came. */
class TurnWarnings {
  private readonly seen = new Set<string>();
  readonly onEvent = (event: AgentEvent): void => {
    if (event.type === "warning") this.seen.add(event.message);
  };
  of(reply: TurnReply): string[] {
    for (const warning of reply.warnings ?? []) this.seen.add(warning);
    return [...this.seen];
  }
}

function streamCompletion(c: Context, deps: GatewayDeps, input: ChatTurnInput, meta: CompletionMeta, run: TurnRunner): Response {
  return streamSSE(c, async (stream) => {
    const client = new AbortController();
    stream.onAbort(() => client.abort());
    const send = (data: unknown): Promise<void> => stream.writeSSE({ data: JSON.stringify(data) });
    // Writes are queued so deltas keep their order while the turn runs synchronously ahead.
    let chain: Promise<void> = send(roleChunk(meta));
    let streamed = "";
    const warnings = new TurnWarnings();
    const onEvent = (event: AgentEvent): void => {
      warnings.onEvent(event);
      if (event.type !== "text_delta" || event.delta === "") return;
      streamed += event.delta;
      const data = contentChunk(meta, event.delta);
      chain = chain.then(() => send(data));
    };
    try {
      // A repeat of a keyed request has no deltas: its answer is sent whole below.
      const { reply, timedOut: late } = await run({ signal: client.signal, onEvent });
      await chain;
      if (late) return await sendError(stream, timedOut(deps.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS));
      throwIfFailed(reply);
      // Slash-command answers and setup help arrive without deltas: send them whole.
      if (streamed === "" && reply.content !== "") await send(contentChunk(meta, reply.content));
      // The client's own tool calls go back whole, after any text the model said with them.
      if (reply.externalToolCalls?.length) await send(toolCallsChunk(meta, reply.externalToolCalls));
      // Warnings ride on the last chunk before [DONE]: the usage chunk when asked for, else the finish chunk.
      const notes = warnings.of(reply);
      const finish = finishChunk(meta, finishReasonFor(reply.stopReason));
      await send(input.includeUsage ? finish : withWarnings(finish, notes));
      if (input.includeUsage) await send(withWarnings(usageChunk(meta, reply.usage), notes));
      await stream.writeSSE({ data: "[DONE]" });
    } catch (err) {
      await chain.catch(() => undefined);
      if (client.signal.aborted) return;
      await sendError(stream, err instanceof ApiError ? err : new ApiError(500, "The server had an error while processing your request", "server_error"));
    }
  });
}

/** Mid-stream failures: OpenAI sends an `error` object as a data event; clients raise it. */
async function sendError(stream: SSEStreamingApi, err: ApiError): Promise<void> {
  await stream.writeSSE({ data: JSON.stringify(err.toBody()) });
}
