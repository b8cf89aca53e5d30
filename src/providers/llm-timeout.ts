/**
 * How long one model call may take, as the Python nanobot decides it: `agents.defaults.llmTimeoutS`
 * when set, else `NANOBOT_LLM_TIMEOUT_S`, else 300 s; 0 (or less) turns the limit off. Once the
 * answer streams, the limit becomes max(300 s, 2 × that), as Python allows streams. A stalled
 * stream has its own, shorter limit: `NANOBOT_STREAM_IDLE_TIMEOUT_S` (default 90 s, at most
 * 3600 s; an invalid or non-positive value keeps the default, as in Python).
 */
import type { LogFunction } from "./types.js";

export const DEFAULT_LLM_TIMEOUT_S = 300;
export const DEFAULT_STREAM_IDLE_TIMEOUT_S = 90;
export const MAX_STREAM_IDLE_TIMEOUT_S = 3600;

/** The wall-clock limit for one model call in ms; 0 = none. */
export function llmTimeoutMs(configured: number | undefined, env: Record<string, string | undefined>, log?: LogFunction): number {
  let seconds = configured;
  if (seconds === undefined) {
    const raw = env.NANOBOT_LLM_TIMEOUT_S?.trim();
    if (raw) {
      const parsed = Number(raw);
      if (Number.isFinite(parsed)) seconds = parsed;
      else log?.("warn", `ignoring NANOBOT_LLM_TIMEOUT_S=${JSON.stringify(raw)} (not a number); using ${DEFAULT_LLM_TIMEOUT_S}s`);
    }
  }
  seconds ??= DEFAULT_LLM_TIMEOUT_S;
  return seconds > 0 ? Math.round(seconds * 1000) : 0;
}

/**
 * The limit once an answer is streaming: Python's max(300 s, 2 × the LLM timeout), so a small
 * `llmTimeoutS` ends a silent model fast without cutting a long answer that keeps arriving.
 */
export function streamingTimeoutMs(wallMs: number): number {
  return wallMs > 0 ? Math.max(DEFAULT_LLM_TIMEOUT_S * 1000, 2 * wallMs) : 0;
}

/** `NANOBOT_STREAM_IDLE_TIMEOUT_S` in ms, or undefined when unset (the adapters' 90 s default applies). */
export function streamIdleTimeoutMs(env: Record<string, string | undefined>, log?: LogFunction): number | undefined {
  const raw = env.NANOBOT_STREAM_IDLE_TIMEOUT_S?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    log?.("warn", `ignoring NANOBOT_STREAM_IDLE_TIMEOUT_S=${JSON.stringify(raw)}; using ${DEFAULT_STREAM_IDLE_TIMEOUT_S}s`);
    return undefined;
  }
  return Math.round(Math.min(value, MAX_STREAM_IDLE_TIMEOUT_S) * 1000);
}
