/**
 * A turn's clock as an HTTP `Server-Timing` header (shown by browsers' network panels and
 * readable by any client): the wait for the concurrency gate, the model's time, each stage and
 * the request's total, so a slow answer says whether it queued, waited on the model, or was
 * slow in nanobot itself.
 */
import type { TurnTimings } from "../agent/turn-processor.js";

const ms = (value: number): string => String(Math.round(value * 100) / 100);

/** `gate;dur=…, model;dur=…;desc="N calls", restore;dur=…, …, total;dur=…`. */
export function serverTiming(timings: TurnTimings | undefined, totalMs: number): string {
  const parts: string[] = [];
  if (timings) {
    parts.push(`gate;dur=${ms(timings.queueMs)};desc="concurrency gate"`);
    parts.push(`model;dur=${ms(timings.modelMs)};desc="${timings.modelCalls} call${timings.modelCalls === 1 ? "" : "s"}"`);
    for (const { stage, ms: stageMs } of timings.stages) parts.push(`${stage};dur=${ms(stageMs)}`);
  }
  parts.push(`total;dur=${ms(totalMs)}`);
  return parts.join(", ");
}
