/**
 * BPE token counting with gpt-tokenizer, loaded lazily (the o200k tables take ~0.4 s to load,
 * which the CLI should not pay before it needs them).
 */

export type EncodingName = "o200k_base" | "cl100k_base";
export type CountFn = (text: string) => number;

/** o200k for gpt-4o / gpt-4.1 / gpt-5 / o-series / gpt-oss; cl100k for everything else. */
export function encodingForModel(model: string): EncodingName {
  const bare = (model.split("/").pop() ?? model).toLowerCase();
  return /^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-oss|chatgpt-|o\d)/.test(bare) ? "o200k_base" : "cl100k_base";
}

const loaded = new Map<EncodingName, Promise<CountFn>>();

/** Special-token text (e.g. `<|endoftext|>`) in user data must count as text, not throw. */
const ALLOW_SPECIAL_AS_TEXT = { disallowedSpecial: new Set<string>() };

async function importEncoding(name: EncodingName): Promise<CountFn> {
  const mod =
    name === "o200k_base"
      ? await import("gpt-tokenizer/encoding/o200k_base")
      : await import("gpt-tokenizer/encoding/cl100k_base");
  return (text) => mod.countTokens(text, ALLOW_SPECIAL_AS_TEXT);
}

export function loadEncoding(name: EncodingName): Promise<CountFn> {
  let pending = loaded.get(name);
  if (!pending) {
    pending = importEncoding(name);
    loaded.set(name, pending);
  }
  return pending;
}

/**
 * BPE merging is quadratic in the length of one pre-token, so a 100 KB run without spaces
 * would take seconds. Counting in ≤ 1 KB slices (cut at whitespace where possible) bounds it
 * at the cost of at most a token of error per slice.
 */
const SLICE = 1024;

export function countSliced(count: CountFn, text: string): number {
  if (text.length <= SLICE) return count(text);
  let total = 0;
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + SLICE, text.length);
    if (end < text.length) {
      const space = text.lastIndexOf(" ", end);
      if (space > start + SLICE / 2) end = space;
    }
    total += count(text.slice(start, end));
    start = end;
  }
  return total;
}

/** The fallback before a tokenizer is loaded: ~4 characters per token. */
export const approximateCount: CountFn = (text) => Math.ceil(text.length / 4);
