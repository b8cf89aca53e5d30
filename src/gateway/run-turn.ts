/**
 * One turn on behalf of an HTTP request: tracked in `ActiveTurns` (so stop and shutdown reach
 * it), bounded by the per-request timeout, and answered with the setup help when no provider
 * is configured. Shared by the OpenAI route and the web UI's event stream.
 */
import type { TurnReply, TurnRequest } from "../agent/turn-processor.js";
import { ConfigError, isAbortError } from "../core/errors.js";
import type { AgentEvent } from "../core/events.js";
import type { ActiveTurns } from "./active-turns.js";
import { ApiError, timedOut } from "./errors.js";
import { TurnDeadline } from "./turn-deadline.js";
import { DEFAULT_TIMEOUT_MS } from "./types.js";
import type { GatewayDeps } from "./types.js";

export interface GatewayTurnResult {
  reply: TurnReply;
  /** True when the per-request timeout stopped the turn. */
  timedOut: boolean;
}

const ZERO_USAGE = { promptTokens: 0, completionTokens: 0 };

/** The request's time limit (`api.timeout`, default 120 s) as a deadline a caller may hold. */
export function turnDeadline(deps: GatewayDeps): TurnDeadline {
  return new TurnDeadline(deps.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS);
}

export async function runGatewayTurn(
  deps: GatewayDeps,
  turns: ActiveTurns,
  request: TurnRequest,
  options: { signal?: AbortSignal; onEvent?: (event: AgentEvent) => void; deadline?: TurnDeadline },
): Promise<GatewayTurnResult> {
  const deadline = options.deadline ?? turnDeadline(deps);
  try {
    return await runWithin(deps, turns, request, options, deadline);
  } finally {
    deadline.dispose();
  }
}

async function runWithin(
  deps: GatewayDeps,
  turns: ActiveTurns,
  request: TurnRequest,
  options: { signal?: AbortSignal; onEvent?: (event: AgentEvent) => void },
  deadline: TurnDeadline,
): Promise<GatewayTurnResult> {
  if (deps.setupHelp !== undefined) {
    return { reply: { content: deps.setupHelp, sessionKey: request.sessionKey, stopReason: "completed", toolsUsed: [], usage: ZERO_USAGE }, timedOut: false };
  }
  const signals = options.signal ? [deadline.signal, options.signal] : [deadline.signal];
  try {
    const reply = await turns.run(request.sessionKey, signals, (signal) => deps.processor.process(request, { signal, onEvent: options.onEvent }));
    return { reply, timedOut: deadline.expired };
  } catch (err) {
    if (isAbortError(err) && deadline.expired) throw timedOut(deadline.timeoutMs);
    // A configuration problem found at turn time (no model, broken agent) is the operator's
    // to fix; the message says what to do.
    if (err instanceof ConfigError) throw new ApiError(500, err.message, "server_error", "configuration_error");
    throw err;
  }
}
