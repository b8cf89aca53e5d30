/**
 * Structured output: an agent's `output` is either a JSON Schema or the Go nanobot's `fields`
 * shorthand, which this turns into a strict schema (every property required, no extras, as
 * OpenAI's strict mode demands). The final answer is then validated against the schema.
 */
import { z } from "zod";
import { ConfigError } from "../core/errors.js";
import type { JsonSchema } from "../core/llm.js";

/**
 * `fields` shorthand: keys are `name`, `name[]` (list), `name(int)` / `(number)` / `(bool)` /
 * `(string)` (type), `name(a,b,c)` (enum), combinable (`tags(a,b)[]`); values are a description
 * string or a nested `fields` object. An array of keys is accepted too (no descriptions).
 */
export type FieldsSpec = { [key: string]: string | FieldsSpec } | string[];

/** An agent's `output` as config may give it. */
export type OutputSpec = { name?: string; schema: JsonSchema } | { name?: string; fields: FieldsSpec } | JsonSchema;

const TYPE_WORDS: Record<string, string> = {
  int: "integer",
  integer: "integer",
  number: "number",
  float: "number",
  bool: "boolean",
  boolean: "boolean",
  string: "string",
  str: "string",
};

const KEY_PATTERN = /^([A-Za-z_][\w-]*)(\[\])?(?:\(([^)]*)\))?(\[\])?$/;

function fieldSchema(key: string, value: string | FieldsSpec | undefined, path: string): { name: string; schema: JsonSchema } {
  const match = KEY_PATTERN.exec(key.trim());
  if (!match?.[1]) throw new ConfigError(`invalid output field "${key}"`, { path, expected: "name, name[], name(int) or name(a,b,c)" });
  const [, name, listBefore, args, listAfter] = match;
  let schema: JsonSchema;
  if (value !== undefined && typeof value === "object") schema = fieldsToJsonSchema(value, `${path}.${name}`);
  else if (args !== undefined) {
    const options = args.split(",").map((s) => s.trim()).filter(Boolean);
    const typeWord = options.length === 1 ? TYPE_WORDS[(options[0] ?? "").toLowerCase()] : undefined;
    schema = typeWord ? { type: typeWord } : { type: "string", enum: options };
  } else schema = { type: "string" };
  if (typeof value === "string" && value) schema = { ...schema, description: value };
  if (listBefore || listAfter) schema = { type: "array", items: schema };
  return { name, schema };
}

/** Converts the `fields` shorthand to a strict JSON Schema object. */
export function fieldsToJsonSchema(fields: FieldsSpec, path = "output.fields"): JsonSchema {
  const entries: Array<[string, string | FieldsSpec | undefined]> = Array.isArray(fields)
    ? fields.map((k): [string, undefined] => [k, undefined])
    : Object.entries(fields);
  const properties: Record<string, JsonSchema> = {};
  for (const [key, value] of entries) {
    const { name, schema } = fieldSchema(key, value, path);
    properties[name] = schema;
  }
  return { type: "object", properties, required: Object.keys(properties), additionalProperties: false };
}

/** Normalises any accepted `output` form to `{ name?, schema }` for `LLMRequest.output`. */
export function toRequestOutput(spec: OutputSpec): { name?: string; schema: JsonSchema } {
  if ("fields" in spec && spec.fields !== undefined) {
    const name = typeof spec.name === "string" ? spec.name : undefined;
    return { ...(name ? { name } : {}), schema: fieldsToJsonSchema(spec.fields as FieldsSpec) };
  }
  if ("schema" in spec && spec.schema !== null && typeof spec.schema === "object") {
    const name = typeof spec.name === "string" ? spec.name : undefined;
    return { ...(name ? { name } : {}), schema: spec.schema as JsonSchema };
  }
  return { schema: spec as JsonSchema };
}

export type OutputValidation = { ok: true; value: unknown } | { ok: false; error: string };

/** Parses the final answer as JSON (tolerating a ```json fence) and checks it against `schema`. */
export function validateStructuredOutput(text: string, schema: JsonSchema): OutputValidation {
  const body = text.trim().replace(/^```(?:json)?\s*\n?([\s\S]*?)\n?```$/, "$1");
  let value: unknown;
  try {
    value = JSON.parse(body) as unknown;
  } catch (err) {
    return { ok: false, error: `the answer is not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  let validator: z.ZodType;
  try {
    validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (err) {
    return { ok: false, error: `the output schema is not supported: ${err instanceof Error ? err.message : String(err)}` };
  }
  const result = validator.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const issues = result.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`);
  return { ok: false, error: `the answer does not match the schema: ${issues.join("; ")}` };
}
