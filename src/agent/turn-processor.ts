/**
 * The one door the faces (CLI, HTTP API, MCP server, cron) use to run a turn. The AgentLoop
 * implements it with locks, queues and slash commands; `DirectTurnProcessor` is the minimal
 * version (one turn straight through the session store) for scripts and early wiring.
 */
import type { AgentEvent } from "../core/events.js";
import type { StopReason, Usage, UserContentPart } from "../core/messages.js";
import type { Runtime } from "./runtime.js";
import { runSessionTurn } from "./session-turn.js";

export interface TurnRequest {
  sessionKey: string;
  content: string | UserContentPart[];
  /** Agent name (`nanobot` or absent = the default agent). */
  agent?: string;
  /** Where the message came from (`cli`, `api`, `mcp`, `cron`, a channel name). */
  channel?: string;
  senderId?: string;
  metadata?: Record<string, unknown>;
}

export interface TurnOptions {
  signal?: AbortSignal;
  /** Every engine event as it happens (streaming faces). */
  onEvent?: (event: AgentEvent) => void;
}

export interface TurnReply {
  content: string;
  sessionKey: string;
  stopReason: StopReason;
  toolsUsed: string[];
  usage: Usage;
  /** Set when the turn failed; a one-line, user-facing reason. */
  error?: string;
  /** Things the user should know about the turn, e.g. that their message was cut to fit the model. */
  warnings?: string[];
  /** Set when a slash command answered instead of the model (`/help`, `/new`, …). */
  command?: string;
  turnId?: string;
}

export interface TurnProcessor {
  process(request: TurnRequest, options?: TurnOptions): Promise<TurnReply>;
}

/** Runs each turn directly: no lock, no queue, no commands. */
export class DirectTurnProcessor implements TurnProcessor {
  constructor(private readonly runtime: Runtime) {}

  async process(request: TurnRequest, options: TurnOptions = {}): Promise<TurnReply> {
    const profile = await this.runtime.resolveAgent(request.agent);
    const result = await runSessionTurn(this.runtime, {
      sessionKey: request.sessionKey,
      content: request.content,
      profile,
      signal: options.signal,
      onEvent: options.onEvent,
    });
    return {
      content: result.content,
      sessionKey: result.sessionKey,
      stopReason: result.stopReason,
      toolsUsed: result.toolsUsed,
      usage: result.usage,
      turnId: result.turnId,
      ...(result.stopReason === "error" ? { error: errorLine(result.error) } : {}),
      ...(result.warnings ? { warnings: result.warnings } : {}),
    };
  }
}

function errorLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.split("\n")[0] ?? text;
}
