/**
 * What a server spec says without connecting: its transport, its URL with `${VAR}`s expanded,
 * whether it speaks OAuth. Kept apart from transport.ts, which loads the SDK's client
 * transports, so that `nanobot status` and the gateway's start read specs without the SDK.
 */
import { isSecretKey } from "../core/scrub.js";
import type { McpServerSpec, McpTransportType } from "./types.js";

/** Expands `${VAR}` (and `${VAR:-default}`) from `env`; unknown variables become empty. */
export function expandVars(text: string, env: Record<string, string | undefined>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, fallback?: string) => {
    const value = env[name];
    return value !== undefined && value !== "" ? value : (fallback ?? "");
  });
}

/** stdio when there is a command; for URLs `/sse` at the end of the path means SSE. */
export function detectTransportType(spec: McpServerSpec): McpTransportType {
  if (spec.type) return spec.type;
  if (spec.command) return "stdio";
  if (spec.url) {
    let path = spec.url;
    try {
      path = new URL(spec.url).pathname;
    } catch {
      // Not a parseable URL; the suffix check on the raw text is the best guess.
    }
    return path.replace(/\/+$/, "").endsWith("/sse") ? "sse" : "http";
  }
  return "stdio";
}

/** A URL server speaks OAuth when configured to, or unless its headers already carry credentials (`Authorization`, `X-Api-Key`, …). */
export function usesOAuth(spec: McpServerSpec): boolean {
  if (detectTransportType(spec) === "stdio") return false;
  return spec.oauth !== undefined || !Object.keys(spec.headers ?? {}).some(isSecretKey);
}

/** The server's URL with `${VAR}`s expanded (or undefined for stdio / no url). */
export function serverUrl(spec: McpServerSpec, env: Record<string, string | undefined>): string | undefined {
  return spec.url ? expandVars(spec.url, env) : undefined;
}
