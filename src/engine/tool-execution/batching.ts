/**
 * Consecutive concurrency-safe calls (read-only and not exclusive) share a batch and run
 * together; anything else runs alone. Batches run in order, so a write never overlaps a read
 * that the model issued before or after it.
 */
import { isConcurrencySafe, type Tool } from "../../tools/tool.js";

export function partitionBatches<T extends { tool: Pick<Tool, "readOnly" | "exclusive"> }>(items: readonly T[]): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  for (const item of items) {
    if (isConcurrencySafe(item.tool)) {
      current.push(item);
      continue;
    }
    if (current.length > 0) batches.push(current);
    current = [];
    batches.push([item]);
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
