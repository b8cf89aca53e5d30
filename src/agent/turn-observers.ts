/**
 * Runtime events for observers outside the turn (a UI, a script on the gateway's
 * `/api/events`): one `turn_completed` per finished turn, whatever face started it. Listeners
 * run synchronously and must not throw into the turn; a failing one is dropped from nothing
 * but its own call.
 */
import type { Usage } from "../core/messages.js";
import type { ToolTally } from "./tool-tally.js";
import type { TurnReply, TurnRequest } from "./turn-processor.js";

export interface TurnCompletedEvent {
  type: "turn_completed";
  sessionKey: string;
  turnId?: string;
  /** completed, length, max_iterations, error, aborted, … (the reply's stop reason). */
  stopReason: string;
  usage: Usage;
  toolsUsed: string[];
  /** Wall time from the turn being taken up to its reply, in milliseconds. */
  durationMs: number;
  /** The face it came from (`telegram`, `api`, `cli`), when the request says. */
  channel?: string;
  /** The slash command it was, for command turns. */
  command?: string;
  error?: string;
  /** ISO time the turn finished. */
  at: string;
  /** Tool calls made and failed, per tool. */
  toolCalls?: ToolTally;
  /** Waiting for admission and a model slot, time inside model calls, and their count (ms). */
  timings?: { queueMs: number; modelMs: number; modelCalls: number };
  /** The worker that ran it, on events relayed from another worker of a cluster. */
  worker?: string;
}

export type TurnObserverEvent = TurnCompletedEvent;
export type TurnObserver = (event: TurnObserverEvent) => void;

export class TurnObservers {
  private readonly listeners = new Set<TurnObserver>();

  subscribe(listener: TurnObserver): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get size(): number {
    return this.listeners.size;
  }

  /** Emits `turn_completed` for `reply`, taken up at `startedAt` (performance.now()). */
  completed(request: TurnRequest, reply: TurnReply, startedAt: number): void {
    if (this.listeners.size === 0) return;
    const event: TurnCompletedEvent = {
      type: "turn_completed",
      sessionKey: reply.sessionKey,
      ...(reply.turnId ? { turnId: reply.turnId } : {}),
      stopReason: reply.stopReason,
      usage: reply.usage,
      toolsUsed: reply.toolsUsed,
      durationMs: Math.round(performance.now() - startedAt),
      ...(request.channel ? { channel: request.channel } : {}),
      ...(reply.command ? { command: reply.command } : {}),
      ...(reply.error ? { error: reply.error } : {}),
      at: new Date().toISOString(),
      ...(reply.toolTally ? { toolCalls: reply.toolTally } : {}),
      ...(reply.timings ? { timings: { queueMs: reply.timings.queueMs, modelMs: reply.timings.modelMs, modelCalls: reply.timings.modelCalls } } : {}),
    };
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // An observer's failure is its own; the turn has already answered.
      }
    }
  }
}
