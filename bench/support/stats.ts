/** Small statistics for the side-by-side benchmarks: median with min/max, and paired ratios. */

export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function spread(values: readonly number[]): Spread {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, runs: 0 };
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), runs: values.length };
}

/**
 * Ratio a/b for each run index where both sides measured, summarised: runs were interleaved
 * (A B A B …), so drift of the shared machine hits both sides of each pair alike.
 */
export function pairedRatio(a: readonly number[], b: readonly number[]): Spread {
  const ratios: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (Number.isFinite(x) && Number.isFinite(y) && y > 0) ratios.push(x / y);
  }
  return spread(ratios);
}

/** Percentile (0–100) by nearest rank. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((x, y) => x - y);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** `12.3 (11.9–13.0)` with a fixed number of decimals. */
export function fmtSpread(s: Spread, digits = 1): string {
  if (s.runs === 0 || !Number.isFinite(s.median)) return "—";
  return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
}

/** Left-aligned first column, right-aligned others, two spaces between. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => (r[c] ?? "").length)));
  const line = (r: readonly string[]) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}
