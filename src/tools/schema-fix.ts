/**
 * Tool schemas come from zod, MCP servers and users; providers reject anything that is not an
 * object schema with `properties`. `fixToolSchema` makes the minimal repairs (Go nanobot's
 * ValidateAndFixToolSchema) and never mutates its input.
 *
 * Every run builds its tool registry afresh, so the repair is remembered per input schema: the
 * same schema object yields the same repaired object, which keeps the per-schema caches
 * downstream (token counts, serialised request bodies) warm across turns. Schemas are treated as
 * immutable once handed to a tool; a changed schema must be a new object.
 */
import type { JsonSchema } from "../core/llm.js";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const repaired = new WeakMap<object, JsonSchema>();
const EMPTY: JsonSchema = Object.freeze({ type: "object", properties: Object.freeze({}) }) as JsonSchema;

/** Returns a copy of `schema` that is `{ type: "object", properties: {...} }` at the top. */
export function fixToolSchema(schema: unknown): JsonSchema {
  if (!isRecord(schema)) return EMPTY;
  let fixed = repaired.get(schema);
  if (!fixed) {
    fixed = repair(schema);
    repaired.set(schema, fixed);
  }
  return fixed;
}

function repair(schema: Record<string, unknown>): JsonSchema {
  const base: Record<string, unknown> = { ...schema };
  base.type = "object";
  if (!isRecord(base.properties)) base.properties = {};
  const properties = base.properties as Record<string, unknown>;
  if (base.required !== undefined) {
    // A `required` that is not a list of declared names makes strict providers refuse the tool.
    const required = Array.isArray(base.required)
      ? base.required.filter((name): name is string => typeof name === "string" && name in properties)
      : [];
    if (required.length > 0) base.required = required;
    else delete base.required;
  }
  return base;
}
