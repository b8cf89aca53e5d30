/**
 * Turns a failed MCP handshake into one line a user can act on. fetch says only "fetch failed"
 * (the reason is two `cause`s down), the SDK's HTTP errors carry the status in `code`, and a
 * missing command is a bare `spawn x ENOENT`.
 */
import { errorMessage } from "../core/errors.js";

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  ETIMEDOUT: "connection timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
  CERT_HAS_EXPIRED: "TLS certificate expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "self-signed TLS certificate",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS certificate not trusted",
};

interface Where {
  /** The server's URL (HTTP/SSE) with secrets in the query left out. */
  url?: string;
  /** The command of a stdio server. */
  command?: string;
}

function causes(err: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = err; e && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(e);
  return chain;
}

function field(e: unknown, name: string): unknown {
  return typeof e === "object" && e !== null ? (e as Record<string, unknown>)[name] : undefined;
}

/** `http://host:port/path` without the query or credentials (tokens sometimes live there). */
export function displayUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return raw;
  }
}

export function describeConnectError(err: unknown, where: Where): string {
  const chain = causes(err);
  const at = where.url ? ` at ${displayUrl(where.url)}` : "";
  for (const e of chain) {
    const code = field(e, "code");
    // StreamableHTTPError / SseError: `code` is the HTTP status.
    if (typeof code === "number" && code >= 100 && code < 600 && where.url) {
      const detail = errorMessage(e).replace(/^(Streamable HTTP|SSE) error:\s*/i, "").replace(/^Error POSTing to endpoint:?\s*/i, "");
      return `HTTP ${code}${at}${detail ? `: ${oneLine(detail)}` : ""}`;
    }
    if (typeof code === "string") {
      if (code === "ENOENT" && where.command) return `command not found: ${where.command} (ENOENT)`;
      if (code === "EACCES" && where.command) return `command not executable: ${where.command} (EACCES)`;
      const reason = NETWORK_REASONS[code];
      if (reason) return `${reason} (${code})${at}`;
    }
  }
  // A stdio server that dies at start-up: the SDK says only "Connection closed" (stderr follows).
  if (where.command && /Connection closed/i.test(errorMessage(err))) return "the server closed its stdio before the MCP handshake finished";
  // fetch's own reasons without a code ("bad port", "invalid url") sit in the innermost cause.
  const message = errorMessage(err);
  if (message === "fetch failed") {
    const inner = chain.at(-1);
    const detail = inner && inner !== err ? errorMessage(inner) : "";
    return `cannot connect${at}${detail && detail !== "fetch failed" ? `: ${detail}` : ""}`;
  }
  return oneLine(message);
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
}
