/**
 * Runs the zod schema and turns its issues into our two outcomes: unknown keys become
 * warnings (and are dropped), anything else becomes one ConfigError line
 * `file: key.path: expected …, got …`.
 */
import type { z } from "zod";
import { ConfigError } from "../core/errors.js";
import { formatPath } from "./interpolate.js";
import { isPlainObject } from "./normalize.js";
import type { PlainObject } from "./normalize.js";
import { unknownKeyHint } from "./suggest.js";

type Issue = z.core.$ZodIssue;

export interface Validated<T> {
  value: T;
  warnings: string[];
}

/**
 * Parses `doc` with `schema`. Unknown keys are removed and reported as warnings, then the
 * document is parsed again; the first remaining problem is thrown as a ConfigError.
 */
export function validateWith<S extends z.ZodType>(schema: S, doc: PlainObject, file: string): Validated<z.output<S>> {
  const warnings: string[] = [];
  const current: PlainObject = structuredClone(doc);
  // Each round removes every unknown key zod could see; nested unions may reveal more.
  for (let round = 0; round < 8; round++) {
    // jitless: zod would otherwise generate and compile a parser per object schema, which pays
    // off over many parses; a config is parsed once or twice (~6 ms of every start).
    const result = schema.safeParse(current, { jitless: true });
    const unknown = result.success ? [] : result.error.issues.filter((i) => i.code === "unrecognized_keys");
    const problems = result.success ? [] : result.error.issues.filter((i) => i.code !== "unrecognized_keys");
    if (problems.length > 0) throw toConfigError(problems[0]!, current, file);
    if (result.success) return { value: result.data as z.output<S>, warnings };
    for (const issue of unknown) {
      if (issue.code !== "unrecognized_keys") continue;
      const parent = getAt(current, issue.path);
      for (const key of issue.keys) {
        const hint = unknownKeyHint(schema, issue.path.map((p) => (typeof p === "number" ? p : String(p))), key);
        warnings.push(`${file}: unknown key ${formatPath([...issue.path.map(String), key])} (ignored${hint ? `; ${hint}` : ""})`);
        if (isPlainObject(parent)) delete parent[key];
      }
    }
  }
  throw new ConfigError(`${file}: could not validate the configuration`, { file });
}

function getAt(doc: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let cur: unknown = doc;
  for (const seg of path) {
    if (Array.isArray(cur)) cur = cur[Number(seg)];
    else if (isPlainObject(cur)) cur = cur[String(seg)];
    else return undefined;
  }
  return cur;
}

function toConfigError(issue: Issue, doc: PlainObject, file: string): ConfigError {
  const path = formatPath(issue.path.map((p) => (typeof p === "number" ? p : String(p))));
  const expected = expectationOf(issue);
  const got = describeValue(getAt(doc, issue.path));
  return new ConfigError(`${file}: ${path}: ${expected}, got ${got}`, { file, path, expected });
}

/** Our schema messages already read "expected …"; zod's defaults are rephrased to match. */
function expectationOf(issue: Issue): string {
  if (issue.message.startsWith("expected ")) return issue.message;
  switch (issue.code) {
    case "invalid_type":
      return `expected ${article(issue.expected)}`;
    case "invalid_value":
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_union":
      return "expected one of the allowed forms";
    default:
      return `expected a valid value (${issue.message.charAt(0).toLowerCase()}${issue.message.slice(1)})`;
  }
}

function article(type: string): string {
  if (type === "array") return "a list";
  if (type === "object" || type === "record" || type === "map") return "an object";
  if (type === "int") return "an integer";
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** The offending value, short enough for one line. */
export function describeValue(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (typeof value === "string") return truncate(JSON.stringify(value));
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.length === 0 ? "an empty list" : `a list (${truncate(JSON.stringify(value))})`;
  if (isPlainObject(value)) return `an object (${truncate(JSON.stringify(value))})`;
  return typeof value;
}

function truncate(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
