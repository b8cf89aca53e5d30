/**
 * The `invoke_agent <agent>` span of one turn: the root of everything the turn does (model
 * calls, tools, MCP requests), or the child of the `traceparent` its caller sent.
 */
import type { SpanContext } from "../core/tracing/trace-context.js";
import { tracingEnabled, withSpan } from "../core/tracing/tracer.js";
import type { Span } from "../core/tracing/tracer.js";
import type { TurnReply, TurnRequest } from "./turn-processor.js";

/**
 * Runs `fn` in the turn's span. `parent` undefined means the active context (a direct caller's
 * request); `null` starts a new trace (a turn taken from a queue, whose context is another's).
 */
export function withTurnSpan<T>(request: TurnRequest, parent: SpanContext | null | undefined, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  // Off: the turn itself, without building the span's attributes.
  if (!tracingEnabled()) return fn(undefined);
  const agent = request.agent ?? "nanobot";
  return withSpan(
    `invoke_agent ${agent}`,
    {
      ...(parent !== undefined ? { parent } : {}),
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent,
        "gen_ai.conversation.id": request.sessionKey,
        "nanobot.session.key": request.sessionKey,
        "nanobot.channel": request.channel,
      },
    },
    fn,
  );
}

/** What the turn came to: stop reason, token totals, and the failure when it failed. */
export function recordTurnReply(span: Span | undefined, reply: TurnReply): void {
  if (!span) return;
  span.setAttributes({
    "nanobot.turn.id": reply.turnId,
    "nanobot.stop_reason": reply.stopReason,
    "nanobot.command": reply.command,
    "gen_ai.usage.input_tokens": reply.usage.promptTokens,
    "gen_ai.usage.output_tokens": reply.usage.completionTokens,
  });
  if (reply.toolsUsed.length > 0) span.setAttribute("nanobot.tools_used", reply.toolsUsed);
  if (reply.stopReason === "error") span.fail(reply.error === undefined ? undefined : new Error(reply.error), reply.errorKind ?? "provider");
}
