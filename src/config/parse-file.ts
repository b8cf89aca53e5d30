/**
 * Turns file text into a plain object. Syntax errors become one-line ConfigErrors naming the
 * file and the line, since that is the first thing a user needs to fix a typo.
 */
import { extname } from "node:path";
import type * as Yaml from "yaml";
import { ConfigError } from "../core/errors.js";
import { lazyPackage } from "../core/lazy-package.js";
import { lineColumn, locateJsonError } from "./json-locate.js";
import { isPlainObject } from "./normalize.js";
import type { PlainObject } from "./normalize.js";

/** Loaded for YAML files only: JSON configs (the common case) never pay for the parser. */
const yaml = lazyPackage<typeof Yaml>("yaml");

export type ConfigFormat = "json" | "yaml";

/** By extension; for anything else, sniff: a document starting with `{` is JSON. */
export function detectFormat(path: string, text: string): ConfigFormat {
  const ext = extname(path).toLowerCase();
  if (ext === ".json") return "json";
  if (ext === ".yaml" || ext === ".yml") return "yaml";
  return text.trimStart().startsWith("{") ? "json" : "yaml";
}

/** Parses config text; `file` is the name used in error messages. An empty file is `{}`. */
export function parseConfigText(text: string, format: ConfigFormat, file: string): PlainObject {
  const data = format === "json" ? parseJson(text, file) : parseYaml(text, file);
  if (data === undefined || data === null) return {};
  if (!isPlainObject(data)) {
    throw new ConfigError(`${file}: expected a mapping of settings at the top level, got ${describeTop(data)}`, {
      file,
      expected: "an object",
    });
  }
  return data;
}

function describeTop(data: unknown): string {
  if (Array.isArray(data)) return "a list";
  return JSON.stringify(data).slice(0, 40);
}

function parseJson(text: string, file: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const problem = locateJsonError(text);
    const where = problem ? lineColumn(text, problem.offset) : undefined;
    const loc = where ? `line ${where.line}, column ${where.col}: ` : "";
    const reason = problem?.reason ?? (err instanceof Error ? err.message.split("\n")[0] : String(err));
    throw new ConfigError(`${file}: ${loc}invalid JSON: ${reason}`, { file, expected: "valid JSON", cause: err });
  }
}

function parseYaml(text: string, file: string): unknown {
  const doc = yaml().parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const first = doc.errors[0];
  if (first) {
    const pos = first.linePos?.[0];
    const loc = pos ? `line ${pos.line}, column ${pos.col}: ` : "";
    // yaml's messages carry a multi-line code excerpt; keep the first sentence.
    const reason = (first.message.split("\n")[0] ?? first.message).replace(/ at line \d+, column \d+:?$/, "");
    throw new ConfigError(`${file}: ${loc}invalid YAML: ${reason}`, { file, expected: "valid YAML", cause: first });
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 1000 }) as unknown;
  } catch (err) {
    // yaml throws a ReferenceError for alias bombs ("excessive alias count").
    throw new ConfigError(`${file}: invalid YAML: ${err instanceof Error ? err.message : String(err)}`, { file, expected: "valid YAML", cause: err });
  }
  if (isCyclic(data)) {
    throw new ConfigError(`${file}: invalid YAML: an alias refers to the node that contains it (a recursive structure)`, {
      file,
      expected: "YAML without self-referencing aliases",
    });
  }
  return data;
}

/** `a: &x [*x]` is legal YAML but a cycle in JS; every later walk of the config would overflow the stack. */
function isCyclic(value: unknown, ancestors: Set<unknown> = new Set()): boolean {
  if (value === null || typeof value !== "object") return false;
  if (ancestors.has(value)) return true;
  ancestors.add(value);
  const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
  const cyclic = children.some((child) => isCyclic(child, ancestors));
  ancestors.delete(value);
  return cyclic;
}
