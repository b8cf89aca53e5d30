/**
 * Front-matter of SKILL.md files. Nearly every skill's front-matter is flat `key: value` lines,
 * which are read here directly so a turn does not have to load a YAML parser; anything richer
 * (nesting, lists, block scalars, anchors, comments) goes to the yaml package, as before.
 */
import type * as Yaml from "yaml";
import { lazyPackage } from "../core/lazy-package.js";

const yaml = lazyPackage<typeof Yaml>("yaml");

const LINE = /^([A-Za-z_][\w-]*):(?:[ \t]+(.*))?$/;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;

/** One flat scalar, or undefined when it needs a real YAML parser. */
function flatScalar(raw: string): unknown {
  const value = raw.trim();
  if (value === "" || value === "~" || value === "null") return null;
  if (value === "true" || value === "false") return value === "true";
  if (NUMBER.test(value)) return Number(value);
  const first = value[0];
  // JSON-style values: double-quoted strings and inline objects/arrays (the Python nanobot writes
  // `metadata: {"nanobot": ...}`). JSON is a subset of YAML, so the meaning is the same.
  if (first === '"' || first === "{" || first === "[") {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  if (first === "'") return value.length > 1 && value.endsWith("'") && !value.slice(1, -1).includes("'") ? value.slice(1, -1) : undefined;
  // Plain scalars with YAML indicators or comment/mapping markers are left to the parser.
  if (/^[&*!|>%@`#?-]/.test(value) || value.includes(": ") || value.includes(" #")) return undefined;
  return value;
}

function parseFlat(text: string): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === "") continue;
    const match = LINE.exec(line);
    if (!match) return undefined;
    const key = match[1] ?? "";
    const value = flatScalar(match[2] ?? "");
    if (value === undefined || Object.hasOwn(out, key)) return undefined;
    out[key] = value;
  }
  return out;
}

/** The front-matter as an object; unparseable front-matter reads as `{}`. */
export function parseFrontMatter(text: string): Record<string, unknown> {
  const flat = parseFlat(text);
  if (flat) return flat;
  try {
    const meta = yaml().parse(text) as unknown;
    return typeof meta === "object" && meta !== null && !Array.isArray(meta) ? (meta as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
