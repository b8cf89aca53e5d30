/**
 * The Go nanobot's hook map syntax, shared by agent hooks (`config`, `request`, `response`)
 * and MCP message hooks (`mcpServers.<x>.hooks`, keyed by JSON-RPC method):
 * - a key is `name` or `name?k=v&k2=v2`; `*` matches any name; every `k=v` must equal the
 *   event's parameter of that name (`direction`, `name`, `method`, `callOnError`);
 * - a value is one target or a list of them, each `server/tool`; a `!mutate:` prefix means the
 *   hook may inspect but not change the message (a change is taken as a rejection);
 * - keys run in sorted order, targets in the order written.
 */

export interface HookTarget {
  /** `server/tool` of the MCP tool that handles the hook. */
  target: string;
  mutateDisallowed: boolean;
}

export interface HookMapping {
  /** The key as written (for messages). */
  key: string;
  name: string;
  params: Record<string, string>;
  targets: HookTarget[];
}

/** What the config layer hands over: a key → a target or a list of targets. */
export type HooksConfig = Record<string, string | ReadonlyArray<string | Record<string, unknown>>>;

const MUTATE_PREFIX = "!mutate:";

function parseTarget(item: string | Record<string, unknown>): HookTarget | undefined {
  const raw = typeof item === "string" ? item : typeof item.target === "string" ? item.target : typeof item.tool === "string" ? item.tool : "";
  const text = raw.trim();
  if (text === "") return undefined;
  if (text.startsWith(MUTATE_PREFIX)) return { target: text.slice(MUTATE_PREFIX.length).trim(), mutateDisallowed: true };
  return { target: text, mutateDisallowed: false };
}

/** Splits `name?k=v&k=w` into the name and its parameters (repeated values join with `,`, as Go does). */
export function parseHookKey(key: string): { name: string; params: Record<string, string> } {
  const q = key.indexOf("?");
  if (q < 0) return { name: key, params: {} };
  const params: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(key.slice(q + 1))) {
    if (v === "") continue;
    params[k] = params[k] !== undefined ? `${params[k]},${v}` : v;
  }
  return { name: key.slice(0, q), params };
}

/** The hooks block as ordered mappings (sorted by key, as the Go nanobot runs them). */
export function hookMappings(config: HooksConfig | undefined): HookMapping[] {
  if (!config) return [];
  return Object.keys(config)
    .sort()
    .map((key) => {
      const value = config[key];
      const list = value === undefined ? [] : typeof value === "string" ? [value] : value;
      const targets = list.map(parseTarget).filter((t): t is HookTarget => t !== undefined);
      return { key, ...parseHookKey(key), targets };
    });
}

/** Whether a mapping applies to an event `name` with these parameters. */
export function mappingMatches(mapping: HookMapping, name: string, params: Record<string, string> = {}): boolean {
  if (mapping.name !== name && mapping.name !== "*") return false;
  return Object.entries(mapping.params).every(([k, v]) => params[k] === v);
}

/** The targets that run for an event, in order. */
export function matchingTargets(mappings: readonly HookMapping[], name: string, params: Record<string, string> = {}): Array<HookTarget & { key: string }> {
  const out: Array<HookTarget & { key: string }> = [];
  for (const m of mappings) if (mappingMatches(m, name, params)) for (const t of m.targets) out.push({ ...t, key: m.key });
  return out;
}
