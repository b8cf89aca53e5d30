/** Token checks for the WebSocket upgrade, and the rule that a wildcard bind needs a token. */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]", "*", "", "::0"]);

export function isWildcardHost(host: string): boolean {
  return WILDCARD_HOSTS.has(host.trim().toLowerCase());
}

/** The token a client presented: `Authorization: Bearer <t>` or `?token=<t>`. */
export function presentedToken(request: IncomingMessage, url: URL): string | undefined {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (match) return match[1]!.trim();
  }
  return url.searchParams.get("token") ?? undefined;
}

/** Constant-time comparison (hashing first makes the lengths equal). */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined) return false;
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}
