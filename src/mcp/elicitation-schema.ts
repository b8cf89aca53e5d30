/**
 * The flat form schema of an MCP `elicitation/create` request (form mode) as a list of fields
 * every face can render, the checks an answer must pass before it goes back to the server
 * (required fields, types, formats, ranges, enum members), and the parsing of typed text for
 * faces that ask line by line. No SDK import: the Runtime loads this without the MCP SDK.
 */

export interface ElicitOption {
  value: string;
  label: string;
}

interface FieldBase {
  name: string;
  /** `title`, else the property name. */
  label: string;
  description?: string;
  required: boolean;
}

export type StringFormat = "email" | "uri" | "date" | "date-time";

export type ElicitField = FieldBase &
  (
    | { kind: "string"; format?: StringFormat; minLength?: number; maxLength?: number; default?: string }
    | { kind: "number" | "integer"; minimum?: number; maximum?: number; default?: number }
    | { kind: "boolean"; default?: boolean }
    | { kind: "select"; options: ElicitOption[]; default?: string }
    | { kind: "multiselect"; options: ElicitOption[]; minItems?: number; maxItems?: number; default?: string[] }
  );

export type ElicitValue = string | number | boolean | string[];

export interface FieldProblem {
  field: string;
  message: string;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const strings = (v: unknown): string[] | undefined => (Array.isArray(v) && v.every((x) => typeof x === "string") ? (v as string[]) : undefined);

/** `oneOf`/`anyOf` entries `{ const, title }` as options. */
function titledOptions(list: unknown): ElicitOption[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const options = list.filter(isObject).map((o) => ({ value: String(o.const ?? ""), label: str(o.title) ?? String(o.const ?? "") }));
  return options.length > 0 ? options : undefined;
}

/** `enum` (with the deprecated `enumNames` as labels) as options. */
function enumOptions(values: string[], names: unknown): ElicitOption[] {
  const labels = strings(names);
  return values.map((value, i) => ({ value, label: labels?.[i] ?? value }));
}

const FORMATS = new Set<string>(["email", "uri", "date", "date-time"]);

function toField(name: string, prop: Json, required: boolean): ElicitField {
  const base: FieldBase = {
    name,
    label: str(prop.title) ?? name,
    ...(str(prop.description) ? { description: str(prop.description) } : {}),
    required,
  };
  if (prop.type === "boolean") return { ...base, kind: "boolean", ...(typeof prop.default === "boolean" ? { default: prop.default } : {}) };
  if (prop.type === "number" || prop.type === "integer") {
    return { ...base, kind: prop.type, minimum: num(prop.minimum), maximum: num(prop.maximum), default: num(prop.default) };
  }
  if (prop.type === "array") {
    const items = isObject(prop.items) ? prop.items : {};
    const values = strings(items.enum);
    const options = values ? enumOptions(values, undefined) : (titledOptions(items.anyOf) ?? []);
    return { ...base, kind: "multiselect", options, minItems: num(prop.minItems), maxItems: num(prop.maxItems), default: strings(prop.default) };
  }
  const values = strings(prop.enum);
  const options = values ? enumOptions(values, prop.enumNames) : titledOptions(prop.oneOf);
  if (options) return { ...base, kind: "select", options, default: str(prop.default) };
  const format = str(prop.format);
  return {
    ...base,
    kind: "string",
    ...(format && FORMATS.has(format) ? { format: format as StringFormat } : {}),
    minLength: num(prop.minLength),
    maxLength: num(prop.maxLength),
    default: str(prop.default),
  };
}

/** The form's fields in schema order. Non-object schemas yield no fields. */
export function formFields(schema: Record<string, unknown> | undefined): ElicitField[] {
  if (!schema || !isObject(schema.properties)) return [];
  const required = new Set(strings(schema.required) ?? []);
  return Object.entries(schema.properties)
    .filter((entry): entry is [string, Json] => isObject(entry[1]))
    .map(([name, prop]) => toField(name, prop, required.has(name)));
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function formatProblem(format: StringFormat, value: string): string | undefined {
  if (format === "email") return EMAIL.test(value) ? undefined : "must be an email address";
  if (format === "uri") {
    try {
      new URL(value);
      return undefined;
    } catch {
      return "must be a URI (e.g. https://example.com)";
    }
  }
  if (format === "date") return DATE.test(value) && !Number.isNaN(Date.parse(value)) ? undefined : "must be a date (YYYY-MM-DD)";
  return value.includes("T") && !Number.isNaN(Date.parse(value)) ? undefined : "must be a date-time (e.g. 2025-01-31T12:00:00Z)";
}

function rangeProblem(value: number, min: number | undefined, max: number | undefined): string | undefined {
  if (min !== undefined && value < min) return `must be at least ${min}`;
  if (max !== undefined && value > max) return `must be at most ${max}`;
  return undefined;
}

/** Why `value` is not acceptable for `field` (undefined = fine). Absence is checked by the caller. */
export function fieldProblem(field: ElicitField, value: unknown): string | undefined {
  switch (field.kind) {
    case "boolean":
      return typeof value === "boolean" ? undefined : "must be true or false";
    case "number":
    case "integer": {
      if (typeof value !== "number" || !Number.isFinite(value)) return "must be a number";
      if (field.kind === "integer" && !Number.isInteger(value)) return "must be a whole number";
      return rangeProblem(value, field.minimum, field.maximum);
    }
    case "select":
      if (typeof value !== "string") return "must be one of the options";
      return field.options.some((o) => o.value === value) ? undefined : `must be one of: ${field.options.map((o) => o.value).join(", ")}`;
    case "multiselect": {
      const picked = strings(value);
      if (!picked) return "must be a list of options";
      const unknown = picked.filter((v) => !field.options.some((o) => o.value === v));
      if (unknown.length > 0) return `has unknown options: ${unknown.join(", ")}`;
      if (new Set(picked).size !== picked.length) return "lists an option twice";
      if (field.minItems !== undefined && picked.length < field.minItems) return `needs at least ${field.minItems} choice(s)`;
      if (field.maxItems !== undefined && picked.length > field.maxItems) return `allows at most ${field.maxItems} choice(s)`;
      return undefined;
    }
    case "string": {
      if (typeof value !== "string") return "must be text";
      if (field.minLength !== undefined && value.length < field.minLength) return `must be at least ${field.minLength} characters`;
      if (field.maxLength !== undefined && value.length > field.maxLength) return `must be at most ${field.maxLength} characters`;
      return field.format && value !== "" ? formatProblem(field.format, value) : undefined;
    }
  }
}

const isAbsent = (v: unknown): boolean => v === undefined || v === null || v === "";

/**
 * Checks an accepted answer against the requested schema: every required field present, no
 * field the form does not have, each value of the right type, format, range and option set.
 */
export function validateElicitationContent(schema: Record<string, unknown> | undefined, content: unknown): FieldProblem[] {
  if (!isObject(content)) return [{ field: "", message: "the answer must be an object of field values" }];
  const fields = formFields(schema);
  const problems: FieldProblem[] = [];
  for (const key of Object.keys(content)) {
    if (!fields.some((f) => f.name === key)) problems.push({ field: key, message: "is not a field of this form" });
  }
  for (const field of fields) {
    const value = content[field.name];
    if (isAbsent(value)) {
      if (field.required) problems.push({ field: field.name, message: "is required" });
      continue;
    }
    const problem = fieldProblem(field, value);
    if (problem) problems.push({ field: field.name, message: problem });
  }
  return problems;
}

/** One line for error messages: `name is required; integer must be at most 100`. */
export function describeProblems(problems: readonly FieldProblem[]): string {
  return problems.map((p) => (p.field ? `${p.field} ${p.message}` : p.message)).join("; ");
}

/** Drops empty optional values (a blank form field means "not given"). */
export function compactContent(content: Record<string, unknown>): Record<string, ElicitValue> {
  const out: Record<string, ElicitValue> = {};
  for (const [k, v] of Object.entries(content)) {
    if (isAbsent(v)) continue;
    out[k] = v as ElicitValue;
  }
  return out;
}

export type ParsedInput = { value: ElicitValue | undefined } | { error: string };

const YES = new Set(["y", "yes", "true", "1"]);
const NO = new Set(["n", "no", "false", "0"]);

function pickOption(options: readonly ElicitOption[], text: string): string | undefined {
  const index = /^\d+$/.test(text) ? Number(text) - 1 : -1;
  if (index >= 0 && index < options.length) return options[index]?.value;
  const lower = text.toLowerCase();
  return options.find((o) => o.value === text || o.label.toLowerCase() === lower || o.value.toLowerCase() === lower)?.value;
}

/**
 * Typed text → a field value, for faces that ask one field per line. Blank takes the default
 * (or leaves an optional field out); options may be given by number, value or label.
 */
export function parseFieldInput(field: ElicitField, raw: string): ParsedInput {
  const text = raw.trim();
  if (text === "") return { value: field.default };
  switch (field.kind) {
    case "boolean":
      if (YES.has(text.toLowerCase())) return { value: true };
      if (NO.has(text.toLowerCase())) return { value: false };
      return { error: "answer y or n" };
    case "number":
    case "integer": {
      const n = Number(text);
      return Number.isFinite(n) ? { value: n } : { error: "type a number" };
    }
    case "select": {
      const value = pickOption(field.options, text);
      return value !== undefined ? { value } : { error: "pick an option by its number or name" };
    }
    case "multiselect": {
      const parts = text.split(",").map((p) => p.trim()).filter(Boolean);
      const values = parts.map((p) => pickOption(field.options, p));
      const bad = parts.filter((_, i) => values[i] === undefined);
      return bad.length === 0 ? { value: values as string[] } : { error: `unknown option(s): ${bad.join(", ")}` };
    }
    case "string":
      return { value: text };
  }
}

/**
 * The answer a form gives by itself: every field that has a default, with it. Undefined when a
 * required field has none (nobody is there to fill it in), or when the defaults do not pass the
 * form's own checks.
 */
export function defaultContent(schema: Record<string, unknown> | undefined): Record<string, ElicitValue> | undefined {
  const content: Record<string, ElicitValue> = {};
  for (const field of formFields(schema)) {
    if (field.default !== undefined) content[field.name] = field.default;
    else if (field.required) return undefined;
  }
  return validateElicitationContent(schema, content).length === 0 ? content : undefined;
}
