/*
 * Preloaded into a gateway the bench measures (`node --expose-gc --import`): on SIGUSR2 it runs
 * a full garbage collection and writes the heap still in use and the RSS, in bytes, as JSON to
 * $NANOBOT_BENCH_HEAP_FILE. The gateway has no way to be asked for its live heap: `/metrics`
 * reports the heap in use with whatever garbage has not been collected yet.
 */
import { writeFileSync } from "node:fs";

process.on("SIGUSR2", () => {
  globalThis.gc();
  const { heapUsed, rss } = process.memoryUsage();
  writeFileSync(process.env.NANOBOT_BENCH_HEAP_FILE, JSON.stringify({ heapUsed, rss }));
});
