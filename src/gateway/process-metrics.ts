/**
 * The gateway process itself on `/metrics`, under the names Node's Prometheus clients use, so
 * existing dashboards read them: CPU seconds, resident memory, the V8 heap, the event loop's
 * busy time and garbage-collection pauses. Nothing here runs a timer: the figures are read when
 * scraped, and GC pauses arrive from V8's own notifications.
 */
import { PerformanceObserver, constants, performance } from "node:perf_hooks";
import type { MetricsRegistry } from "./metrics.js";

/** Seconds: a young-generation pause is ~1–10 ms, a full collection of a large heap longer. */
const GC_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb",
};

/** Adds the process series to `registry`; returns what stops the GC observer. */
export function registerProcessMetrics(registry: MetricsRegistry): () => void {
  registry.counterOf("process_cpu_seconds_total", "User and system CPU time of the gateway process, every thread.", () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  });
  registry.gauge("process_resident_memory_bytes", "Resident set size of the gateway process.", () => process.memoryUsage.rss());
  registry.gauge("nodejs_heap_size_used_bytes", "V8 heap in use.", () => process.memoryUsage().heapUsed);
  registry.gauge("nodejs_heap_size_total_bytes", "V8 heap reserved.", () => process.memoryUsage().heapTotal);
  // rate() of it is the event loop's utilisation: near 1, every request waits for the others' work.
  registry.counterOf("nodejs_eventloop_busy_seconds_total", "Time the event loop spent running callbacks rather than waiting.", () => performance.eventLoopUtilization().active / 1000);
  const pauses = registry.histogram("nodejs_gc_duration_seconds", "Garbage-collection pauses of the main thread, by kind.", GC_BUCKETS);
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = ((entry as { detail?: unknown }).detail as { kind?: number } | undefined)?.kind;
      pauses.observe(entry.duration / 1000, { kind: (kind !== undefined && GC_KINDS[kind]) || "other" });
    }
  });
  observer.observe({ entryTypes: ["gc"] });
  return () => observer.disconnect();
}
