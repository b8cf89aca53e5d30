/** A finite number from a wire field, else 0 (usage counters are often absent or null). */
export function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
