/**
 * Errors in OpenAI's wire shape. Every failure the gateway answers with — bad input, auth,
 * unknown model, timeout, a failed turn — goes through `ApiError` and the one `onError`
 * handler, so OpenAI clients map them to their own error classes.
 */
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { isConnectionError } from "../session/pg-db.js";

/** `{ error: { message, type, param, code } }` exactly as OpenAI sends it. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly type: string = "invalid_request_error",
    readonly code: string | null = null,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = "ApiError";
  }

  toBody(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const unauthorized = (): ApiError =>
  new ApiError(401, "Incorrect API key provided. Send it as `Authorization: Bearer <gateway.apiKey>`.", "invalid_request_error", "invalid_api_key");

export const modelNotFound = (model: string, known: readonly string[]): ApiError =>
  new ApiError(400, `The model \`${model}\` does not exist. Available models: ${known.join(", ")}`, "invalid_request_error", "model_not_found", "model");

export const bodyTooLarge = (limitBytes: number): ApiError =>
  new ApiError(413, `Request body too large: the limit is ${Math.round(limitBytes / 1024 / 1024)} MB`, "invalid_request_error", "request_too_large");

export const timedOut = (ms: number): ApiError =>
  new ApiError(504, `The turn did not finish within ${Math.round(ms / 1000)} s and was stopped`, "timeout_error", "timeout");

export const shuttingDown = (): ApiError => new ApiError(503, "The gateway is shutting down", "server_error", "shutting_down");

/** How long a client should wait before retrying while the session store is unreachable, s. */
const STORE_RETRY_AFTER_S = 1;

/**
 * The single `onError`: known errors keep their shape; the session store being unreachable (a
 * network cut, a database restart) is a 503 a client may retry; anything else is a 500
 * without internals.
 */
export function errorResponse(err: unknown, c: Context, log?: (msg: string, data: Record<string, unknown>) => void): Response {
  if (err instanceof ApiError) return c.json(err.toBody(), err.status);
  if (isConnectionError(err)) {
    log?.("session store unreachable", { error: err instanceof Error ? err.message : String(err) });
    c.header("Retry-After", String(STORE_RETRY_AFTER_S));
    const message = "The session store is unreachable. Retry the request; sent again with the same Idempotency-Key, it is answered once.";
    return c.json(new ApiError(503, message, "server_error", "store_unavailable").toBody(), 503);
  }
  log?.("unhandled gateway error", { error: err instanceof Error ? err.message : String(err) });
  return c.json(new ApiError(500, "The server had an error while processing your request", "server_error").toBody(), 500);
}
