/**
 * Tool-call arguments arrive as text assembled from fragments. Models sometimes emit near-JSON
 * (trailing commas, single quotes, a cut-off brace); `jsonrepair` fixes what can be fixed and
 * anything else becomes a `parseError` the engine reports back to the model.
 */
import { jsonrepair } from "jsonrepair";

export interface ParsedArguments {
  arguments: Record<string, unknown>;
  parseError?: string;
}

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export function parseToolArguments(raw: string): ParsedArguments {
  if (raw.trim() === "") return { arguments: {} };
  try {
    const value = asObject(JSON.parse(raw));
    if (value) return { arguments: value };
    return { arguments: {}, parseError: "tool arguments must be a JSON object" };
  } catch {
    // fall through to repair
  }
  try {
    const value = asObject(JSON.parse(jsonrepair(raw)));
    if (value) return { arguments: value };
    return { arguments: {}, parseError: "tool arguments must be a JSON object" };
  } catch (err) {
    return { arguments: {}, parseError: `invalid JSON in tool arguments: ${err instanceof Error ? err.message : String(err)}` };
  }
}
