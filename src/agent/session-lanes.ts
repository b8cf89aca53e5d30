/**
 * Per-session lanes: one turn at a time per session, later messages queued behind it. A lane
 * exists only while its session has work, so idle sessions hold no lock. Queued chat messages
 * are injectable — the running turn takes them at its next boundary — and a full queue merges
 * new chat messages into the last queued one instead of dropping them.
 */
import type { InboundMessage } from "../bus/types.js";
import type { AgentEvent } from "../core/events.js";
import type { UserContentPart } from "../core/messages.js";
import type { SpanContext } from "../core/tracing/trace-context.js";
import type { ReplyRoute } from "./outbound-relay.js";
import type { TurnReply, TurnRequest } from "./turn-processor.js";

export type WorkSource = "bus" | "direct" | "system";

export interface WorkItem {
  request: TurnRequest;
  sessionKey: string;
  source: WorkSource;
  /** True when the message may be folded into a running turn (chat messages, sub-agent results). */
  injectable: boolean;
  inbound?: InboundMessage;
  /** Where replies go (bus items). */
  route?: ReplyRoute;
  signal?: AbortSignal;
  onEvent?: (event: AgentEvent) => void;
  /** The caller's active span (or its `traceparent`) when it was queued: the turn span's parent. */
  traceParent?: SpanContext;
  resolve(reply: TurnReply): void;
  reject(error: unknown): void;
}

export interface ActiveTurn {
  item: WorkItem;
  abort: AbortController;
}

export interface Lane {
  key: string;
  queue: WorkItem[];
  running: boolean;
  active?: ActiveTurn;
}

export type EnqueueOutcome = "queued" | "merged" | "over_limit";

export class SessionLanes {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly maxQueue: number) {}

  get(key: string): Lane | undefined {
    return this.lanes.get(key);
  }

  obtain(key: string): Lane {
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { key, queue: [], running: false };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  /** Drops the lane once it has nothing running and nothing queued. */
  release(lane: Lane): void {
    if (!lane.running && lane.queue.length === 0 && this.lanes.get(lane.key) === lane) this.lanes.delete(lane.key);
  }

  size(): number {
    return this.lanes.size;
  }

  /** Items waiting in every lane's queue. */
  queued(): number {
    let count = 0;
    for (const lane of this.lanes.values()) count += lane.queue.length;
    return count;
  }

  all(): Lane[] {
    return [...this.lanes.values()];
  }

  /**
   * Queues `item`. Past `maxQueue` waiting items, an injectable item is merged into the last
   * queued injectable item of the same route (nothing is lost); anything else is queued anyway.
   */
  enqueue(lane: Lane, item: WorkItem): EnqueueOutcome {
    if (lane.queue.length < this.maxQueue) {
      lane.queue.push(item);
      return "queued";
    }
    const target = item.injectable ? [...lane.queue].reverse().find((q) => q.injectable && q.source === item.source && sameRoute(q, item)) : undefined;
    if (!target) {
      lane.queue.push(item);
      return "over_limit";
    }
    target.request = { ...target.request, content: mergeContent(target.request.content, item.request.content) };
    item.resolve(mergedReply(item));
    return "merged";
  }

  /** Takes up to `limit` injectable items from the head of the queue (order is kept). */
  takeInjectable(lane: Lane, limit: number): WorkItem[] {
    const out: WorkItem[] = [];
    while (out.length < limit) {
      const next = lane.queue[0];
      if (!next?.injectable) break;
      lane.queue.shift();
      out.push(next);
    }
    return out;
  }
}

function sameRoute(a: WorkItem, b: WorkItem): boolean {
  return a.route?.channel === b.route?.channel && a.route?.chatId === b.route?.chatId;
}

function mergeContent(a: string | UserContentPart[], b: string | UserContentPart[]): string | UserContentPart[] {
  if (typeof a === "string" && typeof b === "string") return `${a}\n\n${b}`;
  const parts = (c: string | UserContentPart[]): UserContentPart[] => (typeof c === "string" ? [{ type: "text", text: c }] : c);
  return [...parts(a), { type: "text", text: "\n\n" }, ...parts(b)];
}

/** The reply an item gets when it was folded into another message or turn. */
export function mergedReply(item: WorkItem): TurnReply {
  return { content: "", sessionKey: item.sessionKey, stopReason: "completed", toolsUsed: [], usage: { promptTokens: 0, completionTokens: 0 } };
}

export function abortedReply(item: WorkItem): TurnReply {
  return { content: "", sessionKey: item.sessionKey, stopReason: "aborted", toolsUsed: [], usage: { promptTokens: 0, completionTokens: 0 } };
}
