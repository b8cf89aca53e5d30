/**
 * Go nanobot `${…}` expressions that are not plain names (`${servers.hf.instructions.trim()}`,
 * `${topic.toUpperCase()}`, `${1 + 1}`): Go evaluates them as JavaScript (goja) over its
 * globals — `servers.<name>.instructions` and a prompt template's arguments — and so does
 * nanobot, in a fresh `node:vm` context holding only those values (no `require`, `process` or
 * host objects; a 1-second limit). The expression is the config author's, trusted like the
 * config's commands. Go's `prompt()` and `call()` script helpers (MCP calls from an
 * expression) are not available: using one is an error that says so.
 */
import { runInNewContext } from "node:vm";
import { ConfigError } from "../core/errors.js";

/** Go's script helpers nanobot does not offer inside an expression. */
const UNSUPPORTED_HELPERS = ["prompt", "call"] as const;

/** A `${…}` body that is a plain variable name (or `NAME:-default`), not an expression. */
export function isPlainReference(expr: string): boolean {
  const e = expr.trim();
  return e === "nanobot:time" || /^[A-Za-z_][A-Za-z0-9_-]*(:?-.*)?$/s.test(e);
}

export interface ExpressionGlobals {
  servers: Record<string, { instructions: string }>;
  vars?: Record<string, string>;
}

/** Evaluates one expression; the result as Go gives it (a string as is, anything else as JSON). */
export function evaluateGoExpression(expr: string, globals: ExpressionGlobals, where: string): string {
  const context: Record<string, unknown> = { servers: globals.servers, ...globals.vars };
  for (const helper of UNSUPPORTED_HELPERS) {
    if (!(helper in context)) {
      context[helper] = () => {
        throw new Error(`${helper}() (an MCP call from an expression) is not supported by nanobot (TS)`);
      };
    }
  }
  let value: unknown;
  try {
    value = runInNewContext(expr, context, { timeout: 1000, displayErrors: false });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ConfigError(`${where}: the expression \${${expr}} failed: ${reason}`, { path: where });
  }
  if (value === undefined) {
    throw new ConfigError(`${where}: the expression \${${expr}} is undefined (a missing reference?)`, { path: where });
  }
  if (typeof value === "string") return value;
  return JSON.stringify(value) ?? String(value);
}
