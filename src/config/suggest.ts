/**
 * "Did you mean …?" for unknown config keys: the keys the schema knows at the same place, the
 * closest one by edit distance, and — where the two nanobot dialects name a field differently —
 * the other dialect's name (`apiBase` in a Go `llmProviders` entry is Go's `baseURL`).
 */
import type { z } from "zod";

/** Keys one dialect spells differently from the other, by section (`*` = any entry name). */
const DIALECT_KEYS: ReadonlyArray<{ section: readonly string[]; dialect: string; keys: Record<string, string> }> = [
  { section: ["llmProviders", "*"], dialect: "Go", keys: { apiBase: "baseURL", api: "dialect", extraHeaders: "headers", baseUrl: "baseURL" } },
  { section: ["providers", "*"], dialect: "the Python nanobot", keys: { baseURL: "apiBase", baseUrl: "apiBase", dialect: "api", headers: "extraHeaders" } },
];

interface Def {
  type?: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  valueType?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  options?: z.ZodType[];
  element?: z.ZodType;
  left?: z.ZodType;
  right?: z.ZodType;
  getter?: () => z.ZodType;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** The object schemas a value at this place may be (wrappers and unions looked through). */
function objectsOf(schema: z.ZodType, depth = 0): Def[] {
  if (depth > 12) return [];
  const def = defOf(schema);
  switch (def.type) {
    case "object":
      return [def];
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
    case "nonoptional":
      return def.innerType ? objectsOf(def.innerType, depth + 1) : [];
    case "pipe":
      return def.in ? objectsOf(def.in, depth + 1) : [];
    case "lazy":
      return def.getter ? objectsOf(def.getter(), depth + 1) : [];
    case "union":
      return (def.options ?? []).flatMap((o) => objectsOf(o, depth + 1));
    case "intersection":
      return [def.left, def.right].flatMap((s) => (s ? objectsOf(s, depth + 1) : []));
    default:
      return [];
  }
}

/** Schemas of the value under `segment` of a value of `schema`. */
function child(schema: z.ZodType, segment: string | number, depth = 0): z.ZodType[] {
  if (depth > 12) return [];
  const def = defOf(schema);
  switch (def.type) {
    case "record":
      return def.valueType ? [def.valueType] : [];
    case "array":
      return def.element ? [def.element] : [];
    case "object": {
      const own = def.shape?.[String(segment)];
      if (own) return [own];
      return def.catchall ? [def.catchall] : [];
    }
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "catch":
    case "nonoptional":
      return def.innerType ? child(def.innerType, segment, depth + 1) : [];
    case "pipe":
      return def.in ? child(def.in, segment, depth + 1) : [];
    case "lazy":
      return def.getter ? child(def.getter(), segment, depth + 1) : [];
    case "union":
      return (def.options ?? []).flatMap((o) => child(o, segment, depth + 1));
    case "intersection":
      return [def.left, def.right].flatMap((s) => (s ? child(s, segment, depth + 1) : []));
    default:
      return [];
  }
}

/** Every key the schema knows for the object at `path`. */
export function knownKeysAt(schema: z.ZodType, path: ReadonlyArray<string | number>): string[] {
  let here: z.ZodType[] = [schema];
  for (const segment of path) here = here.flatMap((s) => child(s, segment));
  const keys = new Set<string>();
  for (const obj of here.flatMap((s) => objectsOf(s))) for (const k of Object.keys(obj.shape ?? {})) keys.add(k);
  return [...keys];
}

/** Edit distance with swapped neighbours as one edit (`modle` → `model`), ignoring case. */
export function editDistance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let before: number[] = [];
  let prev = Array.from({ length: y.length + 1 }, (_, i) => i);
  for (let i = 1; i <= x.length; i++) {
    const cur = [i];
    for (let j = 1; j <= y.length; j++) {
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      cur[j] = d;
    }
    before = prev;
    prev = cur;
  }
  return prev[y.length]!;
}

/** The closest candidate, when it is close enough to be a typo of `key`. */
export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.floor(key.length / 3));
  let best: { key: string; distance: number } | undefined;
  for (const candidate of candidates) {
    if (candidate === key) continue;
    const distance = editDistance(key, candidate);
    if (distance <= limit && (!best || distance < best.distance)) best = { key: candidate, distance };
  }
  return best?.key;
}

function inSection(path: ReadonlyArray<string | number>, section: readonly string[]): boolean {
  return path.length === section.length && section.every((s, i) => s === "*" || s === String(path[i]));
}

/**
 * The hint for an unknown `key` in the object at `path`: the other dialect's name for it
 * ("Go's key is baseURL"), else the closest known key ("did you mean maxTokens?").
 */
export function unknownKeyHint(schema: z.ZodType, path: ReadonlyArray<string | number>, key: string): string | undefined {
  for (const rule of DIALECT_KEYS) {
    const other = rule.keys[key];
    if (other && inSection(path, rule.section)) return `${rule.dialect}'s key is ${other}`;
  }
  const suggestion = closestKey(key, knownKeysAt(schema, path));
  return suggestion ? `did you mean ${suggestion}?` : undefined;
}
