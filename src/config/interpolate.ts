/**
 * `${VAR}` / `${VAR:-default}` substitution in string values. A variable that is unset and has
 * no default anywhere is a ConfigError naming the variable and the key path: a silently empty
 * API key only fails much later, far from its cause. `$${…}` is a literal `${…}`.
 */
import { ConfigError } from "../core/errors.js";
import { isPlainObject } from "./normalize.js";
import type { PlainObject } from "./normalize.js";

export type Env = Record<string, string | undefined>;

/** Defaults declared in the Go nanobot's `env:` section, by variable name. */
export interface DeclaredEnv {
  defaults: Record<string, string>;
  optional: Set<string>;
}

/**
 * Prose fields where `${…}` is more likely an example than a reference; Go nanobot instructions,
 * introductions and prompt templates are expanded at use instead (src/mcp/instructions.ts).
 */
const PROSE_KEYS = new Set(["instructions", "description", "introduction", "starterMessages", "template"]);

const PATTERN = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}/g;

export interface InterpolateOptions {
  env: Env;
  file: string;
  declared?: DeclaredEnv;
  /**
   * Receives a warning for each Go `${expression}` (not a plain name) in a key that is
   * substituted here: Go would evaluate it as JavaScript, nanobot keeps it as literal text.
   */
  literalExpressions?: string[];
}

/** `${…}` bodies in `value` that are expressions, not names (`$${…}` is a literal and skipped). */
function expressionsIn(value: string): string[] {
  const out: string[] = [];
  for (const m of value.matchAll(/(\$?)\$\{([^{}]*)\}/g)) {
    const body = m[2]!.trim();
    if (!m[1] && body && !/^[A-Za-z_][A-Za-z0-9_]*(:?-[^}]*)?$/.test(body)) out.push(body);
  }
  return out;
}

/** Collects defaults from a normalised `env:` section (string entries are descriptions). */
export function declaredEnv(section: unknown): DeclaredEnv {
  const out: DeclaredEnv = { defaults: {}, optional: new Set() };
  if (!isPlainObject(section)) return out;
  for (const [name, entry] of Object.entries(section)) {
    if (!isPlainObject(entry)) continue;
    if (typeof entry.default === "string") out.defaults[name] = entry.default;
    if (entry.optional === true) out.optional.add(name);
  }
  return out;
}

/** Substitutes variables in one string; `path` names the key for the error message. */
export function interpolateString(value: string, path: string, opts: InterpolateOptions): string {
  return value.replace(PATTERN, (whole, escape: string, name: string, fallback: string | undefined) => {
    if (escape) return whole.slice(1);
    const fromEnv = opts.env[name];
    if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
    if (fallback !== undefined) return fallback;
    const declared = opts.declared?.defaults[name];
    if (declared !== undefined) return declared;
    if (fromEnv !== undefined || opts.declared?.optional.has(name)) return "";
    throw new ConfigError(
      `${opts.file}: ${path}: environment variable ${name} is not set (set it, or write \${${name}:-default})`,
      { file: opts.file, path, expected: `environment variable ${name}` },
    );
  });
}

/** Returns a copy of `doc` with every string value interpolated (keys are left alone). */
export function interpolateConfig(doc: PlainObject, opts: InterpolateOptions): PlainObject {
  return walk(doc, [], opts) as PlainObject;
}

function walk(value: unknown, path: string[], opts: InterpolateOptions): unknown {
  if (typeof value === "string") {
    for (const expr of opts.literalExpressions ? expressionsIn(value) : []) {
      opts.literalExpressions?.push(
        `${formatPath(path)}: \${${expr}} is a Go expression; nanobot (TS) evaluates expressions only in instructions, publish.introduction and prompts templates, so here it stays literal text (use \${NAME} or \${NAME:-default})`,
      );
    }
    return interpolateString(value, formatPath(path), opts);
  }
  if (Array.isArray(value)) return value.map((v, i) => walk(v, [...path, String(i)], opts));
  if (isPlainObject(value)) {
    const out: PlainObject = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = PROSE_KEYS.has(k) && path.length > 0 ? v : walk(v, [...path, k], opts);
    }
    return out;
  }
  return value;
}

/** `["tools", "exec", "allowPatterns", "0"]` → `tools.exec.allowPatterns[0]`. */
export function formatPath(path: ReadonlyArray<string | number | symbol>): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number" || (typeof seg === "string" && /^\d+$/.test(seg))) out += `[${String(seg)}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out || "(root)";
}
