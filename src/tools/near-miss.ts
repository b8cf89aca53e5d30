/**
 * Models often call `readFile` for `read_file` or drop a letter. Suggesting the intended name
 * (only when exactly one candidate is close) lets the model fix the call in one round.
 */

/** Case, `_`, `-` and `.` are noise in tool names: `readFile` ≈ `read_file` ≈ `Read-File`. */
function normalise(name: string): string {
  return name.toLowerCase().replace(/[_\-.\s]/g, "");
}

/** Levenshtein distance, abandoning early once it exceeds `max`. */
function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
      cur.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > max) return max + 1;
    prev = cur;
  }
  return prev[b.length] ?? max + 1;
}

/** The unique known name closest to `name`, or undefined when none or several are equally close. */
export function suggestToolName(name: string, known: readonly string[]): string | undefined {
  const target = normalise(name);
  const same = known.filter((k) => normalise(k) === target);
  if (same.length === 1) return same[0];
  if (same.length > 1) return undefined;
  const maxDistance = target.length <= 4 ? 1 : 2;
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  let tie = false;
  for (const candidate of known) {
    const d = editDistance(target, normalise(candidate), maxDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
      tie = false;
    } else if (d === bestDistance) {
      tie = true;
    }
  }
  return best !== undefined && !tie && bestDistance <= maxDistance ? best : undefined;
}
