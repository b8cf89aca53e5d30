/**
 * Key normalisation before validation: snake_case → camelCase (the Python nanobot writes
 * either), `null` → absent (pydantic dumps unset fields as null), and a few spelling aliases.
 * Keys that are *names* chosen by the user (env vars, headers, server/provider/agent/channel
 * names, JSON Schemas) are never rewritten.
 */

export type PlainObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is PlainObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const SNAKE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$/;

export function snakeToCamel(key: string): string {
  if (!SNAKE.test(key)) return key;
  return key.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** Top-level (or `tools.`) maps whose keys are names; their values are settings objects. */
const NAME_MAPS = new Set([
  "env",
  "providers",
  "llmProviders",
  "mcpServers",
  "tools.mcpServers",
  "agents",
  "channels",
  "modelPresets",
  "hooks",
]);

/** Keys whose whole value is user data (names all the way down): left untouched. */
const OPAQUE_KEYS = new Set([
  "headers",
  "extraHeaders",
  "extraBody",
  "extraQuery",
  "env",
  "args",
  "schema",
  "fields",
  "toolExtensions",
  "permissions",
  "toolOverrides",
  "groups",
]);

/** Spellings that mean the same field. Applied after camel-casing. */
const ALIASES: Record<string, string> = { baseUrl: "baseURL" };
const ALIAS_SCOPES = new Set(["llmProviders.*"]);

export interface NormalizeResult {
  value: PlainObject;
  warnings: string[];
}

/** Normalises a parsed config document. `path` is used for warnings only. */
export function normalizeConfig(raw: PlainObject): NormalizeResult {
  const warnings: string[] = [];
  const value = normalizeObject(raw, [], warnings);
  return { value, warnings };
}

function scopeOf(path: string[]): string {
  // Replace the name segment below a name map by "*" so rules match any name.
  const out: string[] = [];
  for (let i = 0; i < path.length; i++) {
    const prefix = out.join(".");
    out.push(i > 0 && NAME_MAPS.has(prefix) ? "*" : path[i]!);
  }
  return out.join(".");
}

function normalizeObject(obj: PlainObject, path: string[], warnings: string[]): PlainObject {
  const scope = scopeOf(path);
  const keysAreNames = NAME_MAPS.has(scope);
  const out: PlainObject = {};
  for (const [key, val] of Object.entries(obj)) {
    if (val === null || val === undefined) continue;
    let name = key;
    if (!keysAreNames || (scope === "channels" && !isPlainObject(val))) {
      name = snakeToCamel(key);
      if (ALIAS_SCOPES.has(scope)) name = ALIASES[name] ?? name;
    }
    const childPath = [...path, name];
    const child = normalizeValue(val, childPath, keysAreNames ? undefined : name, warnings);
    if (name in out) {
      // Both spellings present: the canonical (camelCase) one wins, whichever comes first.
      warnings.push(`${childPath.join(".")}: set twice (snake_case and camelCase); using the camelCase value`);
      if (name !== key) continue;
    }
    out[name] = child;
  }
  return out;
}

function normalizeValue(value: unknown, path: string[], key: string | undefined, warnings: string[]): unknown {
  // Inside a name map the value is a settings object again, so only OPAQUE keys stop recursion.
  if (key !== undefined && OPAQUE_KEYS.has(key) && !NAME_MAPS.has(path.join("."))) return stripNulls(value);
  if (isPlainObject(value)) return normalizeObject(value, path, warnings);
  if (Array.isArray(value)) {
    return value.filter((v) => v !== null).map((v, i) => normalizeValue(v, [...path, String(i)], undefined, warnings));
  }
  return value;
}

function stripNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((v) => v !== null).map(stripNulls);
  if (isPlainObject(value)) {
    const out: PlainObject = {};
    for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = stripNulls(v);
    return out;
  }
  return value;
}
