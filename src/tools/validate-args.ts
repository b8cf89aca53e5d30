/**
 * A compact JSON-schema validator for the subset tool schemas use (type, required, properties,
 * enum, const, items, min/max, length limits, additionalProperties, anyOf/oneOf). It reports
 * problems as short lines for the model to fix its call; it never throws.
 */
import type { JsonSchema } from "../core/llm.js";

type Schema = Record<string, unknown>;

const MAX_ERRORS = 10;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function matchesType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  if (type === "number") return actual === "number" || actual === "integer";
  return actual === type;
}

function label(path: string): string {
  return path === "" ? "arguments" : path;
}

function checkNumber(value: number, schema: Schema, path: string, errors: string[]): void {
  if (typeof schema.minimum === "number" && value < schema.minimum) {
    errors.push(`${label(path)}: must be >= ${schema.minimum}`);
  }
  if (typeof schema.maximum === "number" && value > schema.maximum) {
    errors.push(`${label(path)}: must be <= ${schema.maximum}`);
  }
  if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) {
    errors.push(`${label(path)}: must be > ${schema.exclusiveMinimum}`);
  }
  if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) {
    errors.push(`${label(path)}: must be < ${schema.exclusiveMaximum}`);
  }
}

function checkString(value: string, schema: Schema, path: string, errors: string[]): void {
  if (typeof schema.minLength === "number" && value.length < schema.minLength) {
    errors.push(`${label(path)}: must have at least ${schema.minLength} characters`);
  }
  if (typeof schema.maxLength === "number" && value.length > schema.maxLength) {
    errors.push(`${label(path)}: must have at most ${schema.maxLength} characters`);
  }
}

function checkArray(value: unknown[], schema: Schema, path: string, errors: string[]): void {
  if (typeof schema.minItems === "number" && value.length < schema.minItems) {
    errors.push(`${label(path)}: must have at least ${schema.minItems} items`);
  }
  if (typeof schema.maxItems === "number" && value.length > schema.maxItems) {
    errors.push(`${label(path)}: must have at most ${schema.maxItems} items`);
  }
  if (isRecord(schema.items)) {
    const items = schema.items;
    value.forEach((item, i) => validateNode(item, items, `${path}[${i}]`, errors));
  }
}

function checkObject(value: Record<string, unknown>, schema: Schema, path: string, errors: string[]): void {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  if (Array.isArray(schema.required)) {
    for (const name of schema.required) {
      if (typeof name === "string" && value[name] === undefined) {
        errors.push(`${path ? `${path}.` : ""}${name}: required property is missing`);
      }
    }
  }
  for (const [key, child] of Object.entries(value)) {
    const childPath = path ? `${path}.${key}` : key;
    const childSchema = properties[key];
    if (isRecord(childSchema)) {
      validateNode(child, childSchema, childPath, errors);
    } else if (schema.additionalProperties === false) {
      errors.push(`${childPath}: unknown property`);
    } else if (isRecord(schema.additionalProperties)) {
      validateNode(child, schema.additionalProperties, childPath, errors);
    }
  }
}

function validateVariants(value: unknown, variants: unknown[], path: string, errors: string[]): void {
  const ok = variants.some((variant) => {
    if (!isRecord(variant)) return true;
    const sub: string[] = [];
    validateNode(value, variant, path, sub);
    return sub.length === 0;
  });
  if (!ok) errors.push(`${label(path)}: does not match any allowed shape`);
}

function validateNode(value: unknown, schema: Schema, path: string, errors: string[]): void {
  if (errors.length >= MAX_ERRORS) return;
  // Boolean schemas (`items: true`) and junk from MCP servers must not throw: `false` rejects
  // everything, anything else that is not an object constrains nothing.
  if (!isRecord(schema)) {
    if ((schema as unknown) === false) errors.push(`${label(path)}: is not allowed`);
    return;
  }
  const variants = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (variants) validateVariants(value, variants, path, errors);

  const types = typeof schema.type === "string" ? [schema.type] : Array.isArray(schema.type) ? schema.type : [];
  const declared = types.filter((t): t is string => typeof t === "string");
  if (declared.length > 0 && !declared.some((t) => matchesType(value, t))) {
    errors.push(`${label(path)}: expected ${declared.join(" or ")}, got ${typeOf(value)}`);
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((allowed) => allowed === value)) {
    errors.push(`${label(path)}: must be one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`);
  }
  if ("const" in schema && schema.const !== value) {
    errors.push(`${label(path)}: must be ${JSON.stringify(schema.const)}`);
  }
  if (typeof value === "number") checkNumber(value, schema, path, errors);
  else if (typeof value === "string") checkString(value, schema, path, errors);
  else if (Array.isArray(value)) checkArray(value, schema, path, errors);
  else if (isRecord(value)) checkObject(value, schema, path, errors);
}

/** Validates tool arguments; returns one line per problem (empty when valid). */
export function validateArguments(schema: JsonSchema, args: unknown): string[] {
  const errors: string[] = [];
  validateNode(args, schema, "", errors);
  return errors.slice(0, MAX_ERRORS);
}
