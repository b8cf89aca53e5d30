/**
 * Finds where a failed edit probably meant to land: the window of lines most similar to the
 * requested text. Similarity is the Dice coefficient of character bigrams per line — cheap
 * enough to slide over a few thousand lines, and forgiving of indentation and small typos.
 */

function bigrams(text: string): Map<string, number> {
  const grams = new Map<string, number>();
  const s = text.trim().replace(/\s+/g, " ");
  for (let i = 0; i < s.length - 1; i += 1) {
    const gram = s.slice(i, i + 2);
    grams.set(gram, (grams.get(gram) ?? 0) + 1);
  }
  return grams;
}

function dice(a: Map<string, number>, b: Map<string, number>, aText: string, bText: string): number {
  if (aText.trim() === bText.trim()) return 1;
  let sizeA = 0;
  let sizeB = 0;
  let common = 0;
  for (const n of a.values()) sizeA += n;
  for (const [gram, n] of b) {
    sizeB += n;
    common += Math.min(n, a.get(gram) ?? 0);
  }
  if (sizeA + sizeB === 0) return 0;
  return (2 * common) / (sizeA + sizeB);
}

export interface ClosestMatch {
  /** 1-based first line of the window. */
  startLine: number;
  endLine: number;
  text: string;
  /** 0..1 */
  similarity: number;
}

/** Above this many lines the search is skipped: the hint is a courtesy, not worth seconds. */
const MAX_LINES = 20_000;

export function findClosestMatch(content: string, needle: string): ClosestMatch | undefined {
  const lines = content.split("\n");
  const wanted = needle.replace(/\n$/, "").split("\n");
  if (lines.length > MAX_LINES || wanted.length === 0) return undefined;
  const size = Math.min(wanted.length, lines.length);
  const wantedGrams = wanted.map(bigrams);
  const lineGrams = lines.map(bigrams);
  let best: ClosestMatch | undefined;
  for (let start = 0; start + size <= lines.length; start += 1) {
    let score = 0;
    for (let i = 0; i < size; i += 1) {
      score += dice(wantedGrams[i] ?? new Map(), lineGrams[start + i] ?? new Map(), wanted[i] ?? "", lines[start + i] ?? "");
    }
    const similarity = score / wanted.length;
    if (!best || similarity > best.similarity) {
      best = {
        startLine: start + 1,
        endLine: start + size,
        text: lines.slice(start, start + size).join("\n"),
        similarity,
      };
    }
  }
  return best;
}
