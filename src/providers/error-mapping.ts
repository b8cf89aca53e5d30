/**
 * Turns HTTP failures, in-stream error events and network errors into `ProviderError`s whose
 * `kind` the retry and fallback decorators decide on. Bodies follow the two shapes seen in the
 * wild: OpenAI `{error:{message,type,param,code}}` and Anthropic `{type:"error",error:{type,message}}`.
 */
import type { HeaderReader } from "./sse-source.js";
import { AbortedError, ContextOverflowError, ProviderError } from "../core/errors.js";
import type { ProviderErrorKind } from "../core/errors.js";

export interface ErrorContext {
  provider?: string;
  model?: string;
  /** Content had already been streamed to the caller. */
  streamed?: boolean;
}

interface ErrorFields {
  message?: string;
  type?: string;
  code?: string;
  retryAfterSeconds?: number;
}

const OVERFLOW_PATTERNS = [
  /context_length_exceeded/i,
  /prompt is too long/i,
  /maximum context length/i,
  /context window/i,
  /too many tokens/i,
  /context length/i,
  /input is too long/i,
  /reduce the length of the messages/i,
];

const QUOTA_PATTERNS = [/insufficient_quota/i, /quota/i, /billing/i, /credit balance/i, /insufficient balance/i];

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function str(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return undefined;
}

/** Reads message/type/code from either vendor's error body (or a bare `{message}`). */
export function readErrorFields(body: unknown): ErrorFields {
  const root = asRecord(body);
  if (!root) return typeof body === "string" && body ? { message: body } : {};
  const inner = asRecord(root.error) ?? root;
  const retryAfter = inner.retry_after ?? root.retry_after;
  return {
    message: str(inner.message) ?? (typeof root.error === "string" ? root.error : str(root.message)),
    type: str(inner.type),
    code: str(inner.code),
    retryAfterSeconds: typeof retryAfter === "number" ? retryAfter : undefined,
  };
}

/** `Retry-After` (seconds or HTTP date), `retry-after-ms`, or "try again in 174ms / 1.5s". */
export function parseRetryAfter(headers: HeaderReader | undefined, message: string | undefined, now = Date.now()): number | undefined {
  const ms = headers?.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Number(ms) / 1000;
  const header = headers?.get("retry-after");
  if (header) {
    const seconds = Number(header);
    if (Number.isFinite(seconds)) return Math.max(0, seconds);
    const date = Date.parse(header);
    if (Number.isFinite(date)) return Math.max(0, (date - now) / 1000);
  }
  const match = message?.match(/try again in\s+([\d.]+)\s*(ms|s|sec|seconds?)\b/i);
  if (match?.[1]) {
    const value = Number(match[1]);
    if (Number.isFinite(value)) return match[2]?.toLowerCase() === "ms" ? value / 1000 : value;
  }
  return undefined;
}

export function isContextOverflowText(text: string): boolean {
  return OVERFLOW_PATTERNS.some((re) => re.test(text));
}

/** Vendor error types/codes that decide the kind regardless of the HTTP status. */
function kindFromCode(type: string, code: string): ProviderErrorKind | undefined {
  const key = `${type} ${code}`.toLowerCase();
  if (/insufficient_quota|billing/.test(key)) return "quota";
  if (/overloaded/.test(key)) return "overloaded";
  if (/rate_limit/.test(key)) return "rate_limit";
  if (/authentication|permission|invalid_api_key/.test(key)) return "auth";
  if (/not_found/.test(key)) return "not_found";
  if (/server_error|api_error|internal/.test(key)) return "server";
  if (/timeout/.test(key)) return "timeout";
  if (/invalid_request/.test(key)) return "bad_request";
  return undefined;
}

function kindFromStatus(status: number, text: string): { kind: ProviderErrorKind; retryable?: boolean } {
  if (status === 429) return QUOTA_PATTERNS.some((re) => re.test(text)) ? { kind: "quota" } : { kind: "rate_limit" };
  if (status === 401 || status === 403) return { kind: "auth" };
  if (status === 402) return { kind: "quota" };
  if (status === 404) return { kind: "not_found" };
  if (status === 408) return { kind: "timeout" };
  if (status === 409) return { kind: "unknown", retryable: true };
  if (status === 529) return { kind: "overloaded" };
  if (status >= 500) return /overloaded/i.test(text) ? { kind: "overloaded" } : { kind: "server" };
  if (status >= 400) return { kind: "bad_request" };
  return { kind: "unknown" };
}

/** Maps a non-2xx HTTP response (status, parsed or raw body, headers) to an error. */
export function mapHttpError(
  status: number,
  body: unknown,
  headers: HeaderReader | undefined,
  ctx: ErrorContext = {},
): ProviderError {
  const fields = readErrorFields(body);
  const text = [fields.message, fields.type, fields.code].filter(Boolean).join(" ");
  const message = `${ctx.provider ?? "provider"} ${status}: ${fields.message ?? "request failed"}`;
  const retryAfterSeconds = fields.retryAfterSeconds ?? parseRetryAfter(headers, fields.message);
  const common = {
    status,
    provider: ctx.provider,
    model: ctx.model,
    providerCode: fields.code ?? fields.type,
    body,
    streamed: ctx.streamed,
    retryAfterSeconds,
  };
  if (status < 500 && isContextOverflowText(text)) return new ContextOverflowError(message, common);
  const byStatus = kindFromStatus(status, text);
  // A 429 that says quota/billing is never transient, whatever the code says.
  if (byStatus.kind === "quota") return new ProviderError(message, { ...common, kind: "quota" });
  // The vendor code refines ambiguous statuses (e.g. 500 vs 503 overloaded); 4xx client and
  // conflict statuses keep the status' meaning.
  // A generic `invalid_request_error` type must not turn a 429 or 5xx into a final bad request
  // (OpenAI-compatible proxies send it on rate limits); the status says more than that type.
  const coded = [400, 401, 403, 409].includes(status) ? undefined : kindFromCode(fields.type ?? "", fields.code ?? "");
  const byCode = coded === "bad_request" && (status === 429 || status >= 500) ? undefined : coded;
  if (byCode) return new ProviderError(message, { ...common, kind: byCode });
  return new ProviderError(message, { ...common, kind: byStatus.kind, retryable: byStatus.retryable });
}

/** Maps an error event received inside an otherwise successful stream. */
export function mapStreamError(body: unknown, ctx: ErrorContext = {}): ProviderError {
  const fields = readErrorFields(body);
  const text = [fields.message, fields.type, fields.code].filter(Boolean).join(" ");
  const message = `${ctx.provider ?? "provider"} stream error: ${fields.message ?? "unknown error"}`;
  const common = {
    provider: ctx.provider,
    model: ctx.model,
    providerCode: fields.code ?? fields.type,
    body,
    streamed: ctx.streamed,
    retryAfterSeconds: fields.retryAfterSeconds ?? parseRetryAfter(undefined, fields.message),
  };
  if (isContextOverflowText(text)) return new ContextOverflowError(message, common);
  const quota = QUOTA_PATTERNS.some((re) => re.test(text));
  const kind = quota ? "quota" : (kindFromCode(fields.type ?? "", fields.code ?? "") ?? "server");
  return new ProviderError(message, { ...common, kind });
}

const CONNECTION_CODES = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
]);
const TIMEOUT_CODES = new Set(["ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const code = asRecord(e)?.code;
    if (typeof code === "string") return code;
    e = asRecord(e)?.cause;
  }
  return undefined;
}

/**
 * Maps a thrown fetch/body-read error. An abort requested by the caller becomes `AbortedError`
 * (never retried); everything else is a connection or timeout problem.
 */
export function mapNetworkError(err: unknown, signal: AbortSignal | undefined, ctx: ErrorContext = {}): Error {
  if (err instanceof ProviderError || err instanceof AbortedError) return err;
  if (signal?.aborted) return new AbortedError(undefined, { cause: signal.reason });
  const code = errorCode(err);
  const kind: ProviderErrorKind = code && TIMEOUT_CODES.has(code) ? "timeout" : "connection";
  const detail = err instanceof Error ? err.message : String(err);
  const known = code && (CONNECTION_CODES.has(code) || TIMEOUT_CODES.has(code)) ? ` (${code})` : "";
  // "terminated" alone tells a user nothing; say that the answer was cut off part-way.
  const what = ctx.streamed && kind === "connection" ? "connection lost mid-answer" : `${kind} error`;
  return new ProviderError(`${ctx.provider ?? "provider"} ${what}${known}: ${detail}`, {
    kind,
    provider: ctx.provider,
    model: ctx.model,
    streamed: ctx.streamed,
    cause: err,
  });
}
