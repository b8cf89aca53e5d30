/**
 * Bearer-token auth for `gateway.apiKey`. Both sides are hashed before the constant-time
 * compare so neither the key's content nor its length leaks through timing.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import { unauthorized } from "./errors.js";

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

/** True when `presented` equals `expected`, in time independent of where they differ. */
export function keysMatch(presented: string, expected: string): boolean {
  return timingSafeEqual(digest(presented), digest(expected));
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerToken(header: string | undefined | null): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(header?.trim() ?? "");
  return match?.[1]?.trim();
}

/**
 * Rejects requests without the key (401, OpenAI shape) unless `isPublic(path)`. With no key
 * configured it lets everything through: the caller refuses non-loopback binds in that case.
 */
export function bearerAuth(apiKey: string | undefined, isPublic: (path: string) => boolean): MiddlewareHandler {
  return async (c, next) => {
    if (!apiKey || isPublic(c.req.path)) return next();
    const token = bearerToken(c.req.header("authorization"));
    if (token === undefined || !keysMatch(token, apiKey)) throw unauthorized();
    return next();
  };
}
