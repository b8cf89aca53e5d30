/**
 * Builds a `Tool` from a zod schema: the schema is the single source of the JSON schema the
 * model sees and of the validation `execute` runs, so the two can never drift apart.
 */
import { z } from "zod";
import type { JsonSchema } from "../../core/llm.js";
import type { Tool, ToolContext, ToolOutput } from "../tool.js";

export interface ToolSpec<S extends z.ZodObject> {
  name: string;
  description: string;
  schema: S;
  readOnly?: boolean;
  exclusive?: boolean;
  timeoutMs?: number;
  run(args: z.output<S>, ctx: ToolContext, signal: AbortSignal): Promise<ToolOutput>;
}

/** An error result the model can read and act on. */
export function errorResult(text: string): ToolOutput {
  return { content: [{ type: "text", text }], isError: true };
}

/** The text of a result, whichever shape it has (handy for tests and for the message tool). */
export function outputText(output: ToolOutput): string {
  if (typeof output === "string") return output;
  return output.content.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join("\n");
}

/** Conversions by schema object: per-turn tools are rebuilt every turn around the same schemas. */
const parametersCache = new WeakMap<z.ZodObject, JsonSchema>();

/**
 * Converts a zod object schema to the provider-facing JSON schema (object with properties).
 * The result is shared between callers of the same schema and must not be mutated.
 */
export function toParameters(schema: z.ZodObject): JsonSchema {
  const cached = parametersCache.get(schema);
  if (cached) return cached;
  const json = z.toJSONSchema(schema, { io: "input" }) as JsonSchema;
  delete json.$schema;
  json.type = "object";
  json.properties ??= {};
  parametersCache.set(schema, json);
  return json;
}

/** Turns zod issues into one line per bad argument, naming the argument. */
export function formatIssues(toolName: string, error: z.ZodError): string {
  const lines = error.issues.map((issue) => {
    const where = issue.path.length > 0 ? issue.path.join(".") : "(arguments)";
    return `- ${where}: ${issue.message}`;
  });
  return `Invalid arguments for ${toolName}:\n${lines.join("\n")}`;
}

export function defineTool<S extends z.ZodObject>(spec: ToolSpec<S>): Tool {
  return {
    name: spec.name,
    description: spec.description,
    parameters: toParameters(spec.schema),
    ...(spec.readOnly !== undefined ? { readOnly: spec.readOnly } : {}),
    ...(spec.exclusive !== undefined ? { exclusive: spec.exclusive } : {}),
    ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
    async execute(args, ctx, signal) {
      const parsed = spec.schema.safeParse(args ?? {});
      if (!parsed.success) return errorResult(formatIssues(spec.name, parsed.error));
      return spec.run(parsed.data, ctx, signal);
    },
  };
}
