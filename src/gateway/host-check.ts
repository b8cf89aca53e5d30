/**
 * What a browser can make a request look like, and what it cannot. A web page on evil.example
 * can make the user's browser send requests to 127.0.0.1 — under its own name (DNS rebinding:
 * `Host: evil.example:18790`) or from its own origin (a cross-site POST or WebSocket carries
 * `Origin: http://evil.example`). It cannot forge `Host` or `Origin`. So a request is served
 * only when its `Host` names this gateway (a loopback name, the bound address, or
 * `allowedHosts`), and a state-changing one only when its `Origin` is absent (curl, SDKs),
 * the gateway's own origin, or listed in `allowedOrigins`. One policy for every route, `/mcp`
 * and WebSocket upgrades alike.
 */
import { networkInterfaces } from "node:os";
import { isLoopbackHost } from "../config/config-helpers.js";

export interface HostPolicy {
  /** Extra host names (`bot.example.com`: any port; `bot.example.com:443`: that port only). */
  allowedHosts?: readonly string[];
  /** Extra origins (`https://app.example.com`) whose requests may change state and get CORS headers. */
  allowedOrigins?: readonly string[];
  /** Addresses the server answers to besides the loopback names: its bound address (any port). */
  localNames?: readonly string[];
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

const bare = (name: string): string => name.trim().toLowerCase().replace(/^\[|\]$/g, "");

/**
 * The names a server bound to `host` answers to by default besides the loopback ones: the
 * address itself, or for a wildcard bind every address of this machine's interfaces. An IP
 * literal cannot be rebound (the attacker's page would have to be served from that address).
 */
export function localNamesFor(host: string): string[] {
  const h = bare(host);
  if (h !== "" && h !== "0.0.0.0" && h !== "::" && h !== "::0" && h !== "*") return [h];
  const names: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const entry of list ?? []) names.push(bare(entry.address.replace(/%.*$/, "")));
  }
  return names;
}

/** Why `host` (a `Host` header value) is refused, or undefined when it names this server. */
export function hostRefusal(host: string | null | undefined, policy: HostPolicy = {}): string | undefined {
  if (!host) return "missing Host header";
  const lower = host.trim().toLowerCase();
  const name = hostnameOf(lower);
  if (isLoopbackHost(name)) return undefined;
  if ((policy.localNames ?? []).some((n) => bare(n) === name)) return undefined;
  // An entry with a port matches that host:port exactly; one without, the name on any port.
  if ((policy.allowedHosts ?? []).some((h) => h.toLowerCase() === lower || bare(h) === name)) return undefined;
  return `Host ${JSON.stringify(host)} is not allowed (add its name to gateway.allowedHosts if this gateway is reached by it)`;
}

/**
 * Why a request carrying `origin` that arrived with `host` is refused, or undefined. No
 * Origin (a non-browser client) passes; so does the gateway's own origin — the origin's
 * host:port equals `Host`, over http, or https when a TLS proxy sits in front — and a listed one.
 */
export function originRefusal(origin: string | null | undefined, host: string | null | undefined, policy: HostPolicy = {}): string | undefined {
  if (origin === null || origin === undefined) return undefined;
  if (isListedOrigin(origin, policy) || isSameOrigin(origin, host)) return undefined;
  return `Origin ${JSON.stringify(origin)} is not allowed (only this gateway's own pages, or gateway.allowedOrigins, may send requests that change state)`;
}

/** True when `origin` is one of `allowedOrigins` (compared in normalised `scheme://host[:port]` form). */
export function isListedOrigin(origin: string, policy: HostPolicy): boolean {
  const normal = normalOrigin(origin);
  return normal !== undefined && (policy.allowedOrigins ?? []).some((o) => normalOrigin(o) === normal);
}

function isSameOrigin(origin: string, host: string | null | undefined): boolean {
  if (!host) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null" (sandboxed frames, file://) and garbage are never same-origin
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.origin !== origin.trim().toLowerCase().replace(/\/$/, "")) return false;
  try {
    // Parsed with the origin's scheme, so a default port in either spelling compares equal.
    return new URL(`${url.protocol}//${host.trim()}`).host === url.host;
  } catch {
    return false;
  }
}

/** `scheme://host[:port]` of an origin string, or undefined when it is not one. */
export function normalOrigin(value: string): string | undefined {
  try {
    const url = new URL(value.trim());
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    return url.origin;
  } catch {
    return undefined;
  }
}

/** Host, then Origin (on every method: the MCP transport's own rule), as one refusal reason. */
export function rejectedHost(headers: Headers, policy: HostPolicy = {}): string | undefined {
  const host = headers.get("host");
  return hostRefusal(host, policy) ?? originRefusal(headers.get("origin"), host, policy);
}
