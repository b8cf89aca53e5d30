/**
 * The one door the faces (CLI, HTTP API, MCP server, cron) use to run a turn. The AgentLoop
 * implements it with locks, queues and slash commands; `DirectTurnProcessor` is the minimal
 * version (one turn straight through the session store) for scripts and early wiring.
 */
import { TurnObservers } from "./turn-observers.js";
import { isAbortError } from "../core/errors.js";
import { KeyedSerial } from "../core/keyed-serial.js";
import type { AgentEvent } from "../core/events.js";
import type { ToolDefinition } from "../core/llm.js";
import type { StopReason, ToolCallPart, Usage, UserContentPart } from "../core/messages.js";
import type { SlotClock } from "./model-slot.js";
import type { Runtime } from "./runtime.js";
import { agentThread } from "./agent-thread.js";
import { runSessionTurn } from "./session-turn.js";
import type { StageTiming } from "./stage-timer.js";
import { recordTurnReply, withTurnSpan } from "./turn-span.js";
import { ToolTallyCounter } from "./tool-tally.js";
import type { ToolTally } from "./tool-tally.js";
import { settleThrownTurn, thrownTurnReply, turnErrorKind } from "./turn-failure.js";

export interface TurnRequest {
  sessionKey: string;
  content: string | UserContentPart[];
  /** Agent name (`nanobot` or absent = the default agent). */
  agent?: string;
  /** Where the message came from (`cli`, `api`, `mcp`, `cron`, a channel name). */
  channel?: string;
  /**
   * The chat the message came from, when it came from a chat channel. Recorded with the turn as
   * the session's `chat` so deliveries that pick a chat (heartbeat) reach it even when the
   * session key is a thread's (`slack:C1:1700.1`, `matrix:!room:hs:thread:$ev`).
   */
  chatId?: string;
  senderId?: string;
  metadata?: Record<string, unknown>;
  /**
   * Tools the caller runs itself (the OpenAI API's `tools[]`, Go nanobot's external tools):
   * offered beside the agent's own, winning a name clash. A call to one ends the turn with
   * `external_tool` and the calls in `externalToolCalls`.
   */
  externalTools?: ToolDefinition[];
  /**
   * The caller's results for the calls a turn handed it: the run continues from them (no new
   * user message; `content` is ignored). Each must answer a call still open in the session.
   */
  toolResults?: Array<{ toolCallId: string; content: string }>;
  /** The id the stored user message gets (an Idempotency-Key's first attempt records it). */
  messageId?: string;
  /**
   * Answer this already stored user message, whose turn a dead worker left interrupted, instead
   * of storing a new one (`content` is not stored again). Needs a store that can reopen turns.
   */
  resumeMessageId?: string;
}

export interface TurnOptions {
  signal?: AbortSignal;
  /** Every engine event as it happens (streaming faces). */
  onEvent?: (event: AgentEvent) => void;
}

/**
 * Why a turn failed, for faces that answer differently (the OpenAI API: 502 for the provider,
 * 500 for nanobot itself): the model provider failed, the configuration is broken (no model,
 * an unknown agent), or something else in nanobot failed (a stage threw: a store write, a
 * workspace file, a command), or the request itself was wrong (tool results that answer no open call),
 * or it conflicts with the session as it is now (a retry of an interrupted turn the conversation went past).
 */
export type TurnErrorKind = "provider" | "config" | "internal" | "request" | "conflict";

export interface TurnReply {
  content: string;
  sessionKey: string;
  stopReason: StopReason;
  toolsUsed: string[];
  usage: Usage;
  /** Set when the turn failed; a one-line, user-facing reason. */
  error?: string;
  /** Set with `error`: whose failure it was. Absent on an engine-ended error means the provider. */
  errorKind?: TurnErrorKind;
  /** Things the user should know about the turn, e.g. that their message was cut to fit the model. */
  warnings?: string[];
  /** Set when a slash command answered instead of the model (`/help`, `/new`, …). */
  command?: string;
  turnId?: string;
  /** Where the turn's time went; the gateway sends it as a `Server-Timing` header. */
  timings?: TurnTimings;
  /** With stop reason `external_tool`: the calls the caller must run and answer (`toolResults`). */
  externalToolCalls?: ToolCallPart[];
  /** Tool calls made and failed, per tool (for `/metrics`). */
  toolTally?: ToolTally;
  /**
   * The turn was cut off by the loss of the session store (its lease connection broke, or the
   * store became unreachable) and left for the next holder of the session's lease to close as
   * interrupted: the same request may resume it (an Idempotency-Key's retry does).
   */
  interrupted?: true;
}

/** A turn's clock, ms: waiting for the concurrency gate, inside model calls, and per stage. */
export interface TurnTimings extends SlotClock {
  stages: StageTiming[];
}

/** What a processor has in hand right now (the gateway's `/metrics` gauges). */
export interface TurnLoad {
  /** Turns waiting: queued behind their session's running turn, or for admission or a model slot. */
  queued: number;
  /** Sessions with a turn running or queued. */
  activeSessions: number;
}

export interface TurnProcessor {
  process(request: TurnRequest, options?: TurnOptions): Promise<TurnReply>;
  /** Its queue and sessions now; absent for processors without a queue. */
  load?(): TurnLoad;
  /** Where `turn_completed` events go (the gateway's `/api/events`). */
  readonly observers?: TurnObservers;
}

/**
 * Runs each turn directly: no queue limits, no commands, no cluster lease — but one turn per
 * session at a time in this process (the next waits, in arrival order), so concurrent callers
 * of one session never interleave turns. Like the AgentLoop it never rejects for a failed
 * turn: a stage that throws (an unknown agent, a broken config, a store write) leaves the
 * session legal and answers with an error reply.
 */
export class DirectTurnProcessor implements TurnProcessor {
  readonly observers = new TurnObservers();
  private readonly sessions = new KeyedSerial();

  constructor(private readonly runtime: Runtime) {}

  process(request: TurnRequest, options: TurnOptions = {}): Promise<TurnReply> {
    const run = (): Promise<TurnReply> =>
      withTurnSpan(request, undefined, async (span) => {
        const started = performance.now();
        const reply = await this.processThread(request, options);
        recordTurnReply(span, reply);
        this.observers.completed(request, reply, started);
        return reply;
      });
    return this.inSessionOrder(request.sessionKey, options.signal, run);
  }

  /** `run` once the session's earlier turns in this process are done; stopped while waiting, it never runs. */
  private async inSessionOrder(sessionKey: string, signal: AbortSignal | undefined, run: () => Promise<TurnReply>): Promise<TurnReply> {
    let release: () => void;
    try {
      release = await this.sessions.acquire(sessionKey, signal);
    } catch (error) {
      if (signal?.aborted || isAbortError(error)) return abortedReply(sessionKey);
      throw error;
    }
    try {
      return await run();
    } finally {
      release();
    }
  }

  private async processThread(request: TurnRequest, options: TurnOptions): Promise<TurnReply> {
    const thread = agentThread(this.runtime.config, request.sessionKey, request.agent);
    if (thread.sessionKey === request.sessionKey) return this.run(request, options);
    try {
      const reply = await this.run({ ...request, sessionKey: thread.sessionKey }, options);
      return { ...reply, sessionKey: request.sessionKey };
    } finally {
      if (thread.ephemeral) await this.runtime.store().deleteSession(thread.sessionKey).catch(() => undefined);
    }
  }

  private async run(request: TurnRequest, options: TurnOptions): Promise<TurnReply> {
    let turnId: string | undefined;
    const tools = new ToolTallyCounter();
    try {
      const profile = await this.runtime.resolveAgent(request.agent);
      const result = await runSessionTurn(this.runtime, {
        sessionKey: request.sessionKey,
        content: request.content,
        profile,
        signal: options.signal,
        onEvent: (event) => {
          tools.observe(event);
          options.onEvent?.(event);
        },
        onTurnBegun: (id) => {
          turnId = id;
        },
        ...(request.externalTools?.length ? { externalTools: request.externalTools } : {}),
        ...(request.toolResults ? { toolResults: request.toolResults } : {}),
        ...(request.messageId !== undefined ? { messageId: request.messageId } : {}),
        ...(request.resumeMessageId !== undefined ? { resumeMessageId: request.resumeMessageId } : {}),
      });
      return {
        content: result.content,
        sessionKey: result.sessionKey,
        stopReason: result.stopReason,
        toolsUsed: result.toolsUsed,
        usage: result.usage,
        turnId: result.turnId,
        ...(result.stopReason === "error" ? { error: errorLine(result.error), errorKind: turnErrorKind(result.error) } : {}),
        ...(result.warnings ? { warnings: result.warnings } : {}),
        ...(result.externalToolCalls?.length ? { externalToolCalls: result.externalToolCalls } : {}),
        ...tools.field,
      };
    } catch (error) {
      const stopped = isAbortError(error) || options.signal?.aborted === true;
      await settleThrownTurn(this.runtime, { sessionKey: request.sessionKey, request, turnId, error, stopped });
      if (stopped) return { ...abortedReply(request.sessionKey), ...(turnId ? { turnId } : {}) };
      this.runtime.logger.error("turn failed", { sessionKey: request.sessionKey, error: errorLine(error) });
      return thrownTurnReply(request.sessionKey, error, turnId ? { turnId } : {});
    }
  }
}

function abortedReply(sessionKey: string): TurnReply {
  return { content: "", sessionKey, stopReason: "aborted", toolsUsed: [], usage: { promptTokens: 0, completionTokens: 0 } };
}

function errorLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split("\n")[0] ?? text;
}
