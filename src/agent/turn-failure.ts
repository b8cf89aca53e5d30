/**
 * A turn whose stage threw (an unknown agent, a workspace file that cannot be read, a command
 * that failed, a store write that failed) must not reject its caller nor leave the session in a
 * state the next turn trips over. This closes what the turn left open and builds the error
 * reply the caller gets instead, the same shape as a turn the engine ended with an error.
 */
import { AbortedError, ConfigError, errorMessage, isAbortError, ProviderError } from "../core/errors.js";
import { isConnectionError } from "../session/pg-db.js";
import { PRESET_DEFAULTS } from "../config/model-presets.js";
import { parseCommand } from "./commands/registry.js";
import type { Runtime } from "./runtime.js";
import { closeThrownTurn } from "./session-turn.js";
import { prepareTurnInput } from "./turn-input.js";
import type { TurnErrorKind, TurnReply, TurnRequest } from "./turn-processor.js";

export interface ThrownTurn {
  sessionKey: string;
  request: TurnRequest;
  /** Set once the turn was persisted (its user message is in the store). */
  turnId?: string;
  error: unknown;
  /** The turn was stopped (`/stop`, a cancelled caller) rather than failed. */
  stopped: boolean;
}

/**
 * Leaves the session legal: a begun turn still pending is failed (or stopped), keeping the
 * user's message with an error marker after it; a chat message whose turn failed before it was
 * persisted is persisted now, with the marker, so what the user said is not lost (held to the
 * oversized-input rule with the default window, as its agent may be what failed). Commands never
 * enter the history, and a turn stopped before it began has nothing to keep. A store that fails
 * here too is logged: the reply to the caller matters more than a second error.
 */
export async function settleThrownTurn(runtime: Runtime, turn: ThrownTurn): Promise<void> {
  const store = runtime.store();
  try {
    if (turn.turnId) {
      const info = await store.getTurn(turn.turnId);
      if (info?.status === "pending") await closeThrownTurn(store, turn.turnId, turn.stopped && !isAbortError(turn.error) ? new AbortedError("stopped", { cause: turn.error }) : turn.error);
      return;
    }
    // Commands never enter the history; a resumed turn's results were stored by the store, or refused.
    // A resumed interrupted turn's message is stored already.
    if (turn.stopped || turn.request.toolResults || turn.request.resumeMessageId || parseCommand(requestText(turn.request)) !== undefined) return;
    const defaults = runtime.config.agents.defaults;
    const profile = { contextWindow: defaults.contextWindowTokens, maxTokens: defaults.maxTokens ?? PRESET_DEFAULTS.maxTokens, modelRef: defaults.model ?? "" };
    const input = await prepareTurnInput(runtime, profile, turn.sessionKey, turn.request.content);
    const begun = await store.beginTurn(turn.sessionKey, turn.request.messageId ? { ...input.message, id: turn.request.messageId } : input.message);
    await store.failTurn(begun.turnId, turn.error);
  } catch (error) {
    runtime.logger.error("could not close the failed turn", { sessionKey: turn.sessionKey, error: errorMessage(error), cause: errorMessage(turn.error) });
  }
}

/**
 * A turn cut off by the loss of its store (`lostLease`: its lease connection broke; or the error
 * is a connection failure): not closed here, as this worker may no longer own the session; the
 * next lease holder closes it as interrupted. The reply says so (`interrupted`).
 */
export function interruptedTurnReply(sessionKey: string, error: unknown, lostLease: boolean, turnId: string | undefined): TurnReply | undefined {
  if (!lostLease && !isConnectionError(error)) return undefined;
  const reason = lostLease ? "this worker lost the session's lease (its connection to PostgreSQL broke)" : `the session store is unreachable (${errorMessage(error).split("\n")[0]})`;
  return { ...thrownTurnReply(sessionKey, new Error(`interrupted: ${reason}`), turnId ? { turnId } : {}), stopReason: "aborted", interrupted: true };
}

/** The reply a caller gets for a turn that threw: `stopReason: "error"` and a one-line reason. */
export function thrownTurnReply(sessionKey: string, error: unknown, extra: { turnId?: string; command?: string } = {}): TurnReply {
  const text = errorMessage(error).trim() || "the turn failed for an unknown reason";
  return {
    content: "",
    sessionKey,
    stopReason: "error",
    toolsUsed: [],
    usage: { promptTokens: 0, completionTokens: 0 },
    error: text.split("\n")[0] ?? text,
    errorKind: turnErrorKind(error),
    ...(extra.turnId ? { turnId: extra.turnId } : {}),
    ...(extra.command ? { command: extra.command } : {}),
  };
}

/** Whose failure an error is: the provider's, the configuration's, or nanobot's own. */
export function turnErrorKind(error: unknown): TurnErrorKind {
  if (error instanceof ProviderError || hasCode(error, ["provider_error", "context_overflow"])) return "provider";
  if (error instanceof ConfigError || hasCode(error, ["config_error"])) return "config";
  if (hasCode(error, ["unmatched_tool_result"])) return "request";
  if (hasCode(error, ["turn_not_resumable"])) return "conflict";
  return "internal";
}

/** Errors that crossed a boundary (a worker, a serialised result) keep their `code`, not their class. */
function hasCode(error: unknown, codes: readonly string[]): boolean {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && codes.includes(code);
}

function requestText(request: TurnRequest): string {
  return typeof request.content === "string" ? request.content : request.content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

