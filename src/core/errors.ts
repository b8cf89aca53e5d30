/**
 * Errors that callers branch on. Everything else travels as data (tool results with `isError`,
 * `error` events). Each class has a stable `code` so serialised errors can be recognised too.
 */

export class NanobotError extends Error {
  readonly code: string = "nanobot_error";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A configuration problem: names the file, the key path and what was expected. Exit code 2. */
export class ConfigError extends NanobotError {
  override readonly code = "config_error";
  readonly file?: string;
  readonly path?: string;
  readonly expected?: string;
  constructor(message: string, details: { file?: string; path?: string; expected?: string; cause?: unknown } = {}) {
    super(message, { cause: details.cause });
    this.file = details.file;
    this.path = details.path;
    this.expected = details.expected;
  }
}

/** Why a provider call failed, in terms the retry and fallback logic decides on. */
export type ProviderErrorKind =
  | "rate_limit"
  | "quota"
  | "auth"
  | "bad_request"
  | "not_found"
  | "context_overflow"
  | "server"
  | "overloaded"
  | "timeout"
  | "stream_stalled"
  | "connection"
  | "invalid_response"
  | "unknown";

export interface ProviderErrorDetails {
  kind: ProviderErrorKind;
  status?: number;
  retryable?: boolean;
  /** Seconds the server asked us to wait (`Retry-After`, `retry_after`). */
  retryAfterSeconds?: number;
  provider?: string;
  model?: string;
  /** The vendor's error code/type, e.g. `rate_limit_exceeded`, `overloaded_error`. */
  providerCode?: string;
  body?: unknown;
  /** True when some content had already been streamed to the caller before the failure. */
  streamed?: boolean;
  cause?: unknown;
}

const RETRYABLE_KINDS: ReadonlySet<ProviderErrorKind> = new Set([
  "rate_limit",
  "server",
  "overloaded",
  "timeout",
  "stream_stalled",
  "connection",
]);

/** An LLM call failed. `retryable` says whether trying the same request again can help. */
export class ProviderError extends NanobotError {
  override readonly code: string = "provider_error";
  readonly kind: ProviderErrorKind;
  readonly status?: number;
  readonly retryable: boolean;
  readonly retryAfterSeconds?: number;
  readonly provider?: string;
  readonly model?: string;
  readonly providerCode?: string;
  readonly body?: unknown;
  readonly streamed: boolean;
  constructor(message: string, details: ProviderErrorDetails) {
    super(message, { cause: details.cause });
    this.kind = details.kind;
    this.status = details.status;
    this.retryable = details.retryable ?? RETRYABLE_KINDS.has(details.kind);
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.provider = details.provider;
    this.model = details.model;
    this.providerCode = details.providerCode;
    this.body = details.body;
    this.streamed = details.streamed ?? false;
  }
}

/** The prompt did not fit the model's context window; the engine compacts and retries once. */
export class ContextOverflowError extends ProviderError {
  override readonly code = "context_overflow";
  constructor(message: string, details: Omit<ProviderErrorDetails, "kind" | "retryable"> = {}) {
    super(message, { ...details, kind: "context_overflow", retryable: false });
  }
}

/** A tool did not finish within its time limit. */
export class ToolTimeoutError extends NanobotError {
  override readonly code = "tool_timeout";
  readonly toolName: string;
  readonly timeoutMs: number;
  constructor(toolName: string, timeoutMs: number) {
    super(`Tool '${toolName}' timed out after ${Math.round(timeoutMs / 1000)}s`);
    this.toolName = toolName;
    this.timeoutMs = timeoutMs;
  }
}

/** The operation was cancelled through its AbortSignal. */
export class AbortedError extends NanobotError {
  override readonly code = "aborted";
  constructor(message = "The operation was aborted", options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Throws AbortedError when the signal is aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortedError(undefined, { cause: signal.reason });
}

export function isAbortError(err: unknown): boolean {
  if (err instanceof AbortedError) return true;
  return err instanceof Error && (err.name === "AbortError" || err.name === "APIUserAbortError");
}

/** A one-line message for any thrown value. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}
