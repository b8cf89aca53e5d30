/**
 * Models sometimes fetch the same URL or run the same search over and over. After two
 * identical lookups in one run the third is refused with an explanation, which breaks the loop
 * without hiding the earlier results.
 */
const GUARDED: Record<string, { arg: string; noun: string }> = {
  web_fetch: { arg: "url", noun: "URL" },
  web_search: { arg: "query", noun: "query" },
};

export const MAX_IDENTICAL_LOOKUPS = 2;

export class LookupGuard {
  private readonly counts = new Map<string, number>();

  /** Records the call; returns an error text when it is one repeat too many. */
  check(toolName: string, args: Record<string, unknown>): string | undefined {
    const rule = GUARDED[toolName];
    const value = rule ? args[rule.arg] : undefined;
    if (!rule || typeof value !== "string") return undefined;
    const key = `${toolName}\u0000${value.trim().toLowerCase()}`;
    const seen = this.counts.get(key) ?? 0;
    this.counts.set(key, seen + 1);
    if (seen < MAX_IDENTICAL_LOOKUPS) return undefined;
    return (
      `Error: ${toolName} was already called ${seen} times with this ${rule.noun} in this turn, so the call was blocked. ` +
      `Use the results you already have, or try a different ${rule.noun}.`
    );
  }
}
