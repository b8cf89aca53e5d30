/**
 * The gateway's `/metrics`: what its turns, model calls, tools and store did, in Prometheus
 * form. Fed by `turn_completed` events (every face's turns when the gateway runs the agent
 * loop), the running-turn registry and the store's call timings; and the process's own CPU,
 * memory, event loop and GC pauses (`process-metrics.ts`).
 */
import type { TurnObservers } from "../agent/turn-observers.js";
import type { TurnLoad } from "../agent/turn-processor.js";
import type { StoreCallListener } from "../session/timed-store.js";
import type { ActiveTurns } from "./active-turns.js";
import type { WalCheckpointState } from "./types.js";
import { MetricsRegistry } from "./metrics.js";
import { registerProcessMetrics } from "./process-metrics.js";

export interface GatewayMetricsSources {
  observers?: TurnObservers;
  turns: ActiveTurns;
  /** The processor's queue and sessions (the AgentLoop's lanes, every face's turns). */
  load?: () => TurnLoad;
  /** Subscribes to the store's call timings; returns the unsubscribe. */
  observeStore?: (listener: StoreCallListener) => () => void;
  /** The SQLite store's background WAL checkpointer. */
  walCheckpointer?: WalCheckpointState;
}

const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export function createGatewayMetrics(sources: GatewayMetricsSources): { registry: MetricsRegistry; close(): void } {
  const registry = new MetricsRegistry();
  const turns = registry.counter("nanobot_turns_total", "Finished turns by stop reason (error = failed) and channel.");
  const duration = registry.histogram("nanobot_turn_duration_seconds", "Wall time of a turn, from being taken up to its reply.");
  const queueWait = registry.histogram("nanobot_turn_queue_wait_seconds", "Time a turn waited for admission and a model slot.");
  const modelCalls = registry.counter("nanobot_model_calls_total", "Model calls made by turns.");
  const modelLatency = registry.histogram("nanobot_model_call_duration_seconds", "Model call time (a turn's model time over its calls).");
  const tokens = registry.counter("nanobot_tokens_total", "Tokens by type (prompt, completion).");
  const toolUses = registry.counter("nanobot_tool_turns_total", "Turns that used a tool, by tool.");
  const toolFailures = registry.counter("nanobot_tool_turn_errors_total", "Failed turns that used a tool, by tool.");
  const toolCalls = registry.counter("nanobot_tool_calls_total", "Tool calls, by tool.");
  const toolErrors = registry.counter("nanobot_tool_errors_total", "Tool calls that failed (an error result), by tool.");
  const storeLatency = registry.histogram("nanobot_store_operation_duration_seconds", "Session store calls by operation.", STORE_BUCKETS);
  const storeErrors = registry.counter("nanobot_store_errors_total", "Session store calls that failed, by operation.");
  registry.gauge("nanobot_active_turns", "Turns the gateway is running now.", () => sources.turns.size);
  const load = sources.load;
  registry.gauge("nanobot_active_sessions", "Sessions with a turn running (or queued) now.", () => (load ? load().activeSessions : sources.turns.sessionCount));
  registry.gauge("nanobot_turn_queue_depth", "Turns waiting behind their session's turn, for admission or for a model slot.", () => load?.().queued ?? 0);
  const wal = sources.walCheckpointer;
  if (wal) {
    registry.counterOf("nanobot_wal_checkpoints_total", "WAL checkpoints run by the SQLite store's background checkpointer (after commits; none while the database is idle).", () => wal.completed);
    registry.gauge("nanobot_wal_checkpointer_idle", "1 while the background WAL checkpointer sleeps because nothing was committed (the next commit wakes it).", () => (wal.sleeping ? 1 : 0));
  }

  const unsubscribe: Array<() => void> = [registerProcessMetrics(registry)];
  if (sources.observers) {
    unsubscribe.push(
      sources.observers.subscribe((event) => {
        turns.inc({ stop_reason: event.stopReason, channel: event.channel ?? "" });
        duration.observe(event.durationMs / 1000);
        tokens.inc({ type: "prompt" }, event.usage.promptTokens);
        tokens.inc({ type: "completion" }, event.usage.completionTokens);
        for (const tool of event.toolsUsed) {
          toolUses.inc({ tool });
          if (event.stopReason === "error") toolFailures.inc({ tool });
        }
        for (const [tool, tally] of Object.entries(event.toolCalls ?? {})) {
          toolCalls.inc({ tool }, tally.calls);
          if (tally.errors > 0) toolErrors.inc({ tool }, tally.errors);
        }
        const t = event.timings;
        if (t) {
          queueWait.observe(t.queueMs / 1000);
          if (t.modelCalls > 0) {
            modelCalls.inc({}, t.modelCalls);
            modelLatency.observe(t.modelMs / t.modelCalls / 1000);
          }
        }
      }),
    );
  }
  if (sources.observeStore) {
    unsubscribe.push(
      sources.observeStore((operation, ms, ok) => {
        storeLatency.observe(ms / 1000, { operation });
        if (!ok) storeErrors.inc({ operation });
      }),
    );
  }
  return {
    registry,
    close: () => {
      for (const off of unsubscribe) off();
    },
  };
}
