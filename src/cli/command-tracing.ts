/**
 * Tracing for the commands that run turns outside the gateway (`nanobot agent`, `nanobot
 * serve-mcp`): on when the OTEL_* variables ask for it, exactly as on the gateway, and free when
 * they do not. A `TRACEPARENT` variable (OpenTelemetry's carrier for context passed through the
 * environment) puts the command's turns under the caller's trace, so a script or CI job that
 * runs `nanobot agent` sees the turn inside its own trace.
 */
import { startTracing } from "../core/tracing/setup.js";
import type { TracingHandle } from "../core/tracing/setup.js";
import { parseTraceparent } from "../core/tracing/trace-context.js";
import { withRemoteParent } from "../core/tracing/tracer.js";

export interface CommandTracing {
  readonly handle: TracingHandle;
  /** Runs `fn` under the caller's `TRACEPARENT` (when tracing is on and the variable is valid). */
  underCaller<T>(fn: () => T): T;
}

export async function startCommandTracing(env: Record<string, string | undefined>, warn: (message: string) => void): Promise<CommandTracing> {
  const handle = await startTracing({ env, warn });
  if (!handle.enabled) return { handle, underCaller: (fn) => fn() };
  const raw = env["TRACEPARENT"];
  const parent = parseTraceparent(raw);
  if (raw !== undefined && raw !== "" && !parent) warn(`TRACEPARENT "${raw}" is not a W3C traceparent (00-<32 hex>-<16 hex>-<2 hex>): the turn starts its own trace`);
  return { handle, underCaller: (fn) => withRemoteParent(parent, fn) };
}
