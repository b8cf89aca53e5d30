/**
 * DNS-rebinding protection for the HTTP endpoint. A web page on evil.example can make a
 * browser send requests to 127.0.0.1 under its own name; checking that `Host` (and `Origin`,
 * when a browser sends one) name this machine stops it. Loopback names are always allowed;
 * deployments behind a real hostname list it in `allowedHosts` / `allowedOrigins`.
 */
import { isLoopbackHost } from "../../config/config-helpers.js";

export interface HostCheckOptions {
  /** Extra hostnames (with or without `:port`) accepted in `Host`; `"*"` accepts any. */
  allowedHosts?: readonly string[];
  /** Extra origins (`https://app.example.com`) accepted in `Origin`; `"*"` accepts any. */
  allowedOrigins?: readonly string[];
}

/** The hostname of a `Host` header value: `[::1]:8080` → `::1`, `localhost:3000` → `localhost`. */
export function hostnameOf(host: string): string {
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    // Only `[addr]` or `[addr]:port`; `[::1].evil.example` must not read as `::1`.
    return end > 0 && /^(:\d*)?$/.test(h.slice(end + 1)) ? h.slice(1, end) : h;
  }
  const colon = h.indexOf(":");
  // More than one colon without brackets is a bare IPv6 address, not host:port.
  return colon >= 0 && h.indexOf(":", colon + 1) < 0 ? h.slice(0, colon) : h;
}

/** Why the request must be refused, or undefined when its Host and Origin are acceptable. */
export function rejectedHost(headers: Headers, options: HostCheckOptions = {}): string | undefined {
  const hosts = options.allowedHosts ?? [];
  const host = headers.get("host");
  if (!hosts.includes("*")) {
    if (!host) return "missing Host header";
    const lower = host.trim().toLowerCase();
    const name = hostnameOf(lower);
    const allowed = isLoopbackHost(name) || hosts.some((h) => h.toLowerCase() === lower || h.toLowerCase() === name);
    if (!allowed) return `Host ${JSON.stringify(host)} is not allowed`;
  }
  const origin = headers.get("origin");
  const origins = options.allowedOrigins ?? [];
  if (origin && !origins.includes("*")) {
    let name: string | undefined;
    try {
      name = new URL(origin).hostname;
    } catch {
      name = undefined;
    }
    const allowed = (name !== undefined && isLoopbackHost(name)) || origins.some((o) => o.toLowerCase() === origin.toLowerCase());
    if (!allowed) return `Origin ${JSON.stringify(origin)} is not allowed`;
  }
  return undefined;
}

/** A JSON-RPC error response with an HTTP status, the way the SDK's transport answers. */
export function jsonRpcError(status: number, message: string, code = -32000): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }), {
    status,
    headers: { "content-type": "application/json" },
  });
}
