/**
 * The gateway's answer to a browser being an attacker's client (see `host-check.ts`): every
 * route but the open ones checks `Host`; every state-changing request checks `Origin`; the JSON
 * APIs take only JSON (a cross-site `<form>` or `no-cors` fetch can send `text/plain` without a
 * preflight); CORS headers go only to origins in `allowedOrigins`, and a foreign preflight is
 * refused. All of it before authentication, so it holds whether or not `gateway.apiKey` is set.
 */
import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "./errors.js";
import { hostRefusal, isListedOrigin, originRefusal } from "./host-check.js";
import type { HostPolicy } from "./host-check.js";

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** The APIs whose bodies are JSON; `/mcp` is left to the MCP transport, which answers 415 itself. */
const JSON_API = /^\/(v1|api)(\/|$)/;
const CORS_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS";
const CORS_HEADERS = "Authorization, Content-Type, Accept, X-Session-Id, Idempotency-Key, Mcp-Session-Id, Mcp-Protocol-Version, Last-Event-ID";
const CORS_EXPOSE = "Mcp-Session-Id, Server-Timing";

export interface BrowserGuardOptions {
  /** Paths served to anyone (`/health`: probes use whatever Host they like, and it reveals nothing). */
  isOpen?: (path: string) => boolean;
}

const forbidden = (reason: string, code: string): ApiError => new ApiError(403, `Forbidden: ${reason}`, "invalid_request_error", code);

export function browserGuard(policy: HostPolicy, options: BrowserGuardOptions = {}): MiddlewareHandler {
  return async (c, next) => {
    if (options.isOpen?.(c.req.path)) return next();
    const header = c.req.header("host");
    // An absolute-form request line carries a second name; both must be this gateway's.
    const urlHost = new URL(c.req.url).host;
    const host = header ?? urlHost;
    const badHost = hostRefusal(host, policy) ?? hostRefusal(urlHost, policy);
    if (badHost) throw forbidden(badHost, "host_not_allowed");

    const origin = c.req.header("origin");
    const listed = origin !== undefined && isListedOrigin(origin, policy);
    if (c.req.method === "OPTIONS" && origin !== undefined && c.req.header("access-control-request-method") !== undefined) {
      return preflight(c, origin, host, listed, policy);
    }
    if (STATE_CHANGING.has(c.req.method)) {
      const badOrigin = originRefusal(origin, host, policy);
      if (badOrigin) throw forbidden(badOrigin, "origin_not_allowed");
      if (JSON_API.test(c.req.path)) {
        const badType = jsonBodyRefusal(c);
        if (badType) throw new ApiError(415, badType, "invalid_request_error", "unsupported_media_type");
      }
    }
    await next();
    if (listed) grantCors(c, origin);
  };
}

/** A CORS preflight: granted to listed origins, empty for the gateway's own, refused for the rest. */
function preflight(c: Context, origin: string, host: string, listed: boolean, policy: HostPolicy): Response {
  if (!listed) {
    const refused = originRefusal(origin, host, policy);
    if (refused) throw forbidden(refused, "origin_not_allowed");
    return c.body(null, 204);
  }
  return c.body(null, 204, {
    "access-control-allow-origin": origin,
    "access-control-allow-methods": CORS_METHODS,
    "access-control-allow-headers": CORS_HEADERS,
    "access-control-max-age": "600",
    vary: "Origin",
  });
}

function grantCors(c: Context, origin: string): void {
  const set = (headers: Headers): void => {
    headers.set("access-control-allow-origin", origin);
    headers.set("access-control-expose-headers", CORS_EXPOSE);
    headers.append("vary", "Origin");
  };
  try {
    set(c.res.headers);
  } catch {
    // A response with immutable headers (one passed through from fetch) is copied first.
    c.res = new Response(c.res.body, c.res);
    set(c.res.headers);
  }
}

/**
 * Why the body is not acceptable JSON, or undefined. A request without a body may omit the
 * type (a DELETE, a bodiless POST); one with a body must say `application/json` (or `+json`).
 */
function jsonBodyRefusal(c: Context): string | undefined {
  const type = c.req.header("content-type");
  if (type === undefined) {
    const length = c.req.header("content-length");
    const hasBody = c.req.header("transfer-encoding") !== undefined || (length !== undefined && length.trim() !== "0");
    return hasBody ? "Unsupported Media Type: send the body with Content-Type: application/json" : undefined;
  }
  const media = (type.split(";")[0] ?? "").trim().toLowerCase();
  if (media === "application/json" || /^application\/[\w.-]+\+json$/.test(media)) return undefined;
  return `Unsupported Media Type: ${JSON.stringify(type)} is not accepted here; send Content-Type: application/json`;
}
