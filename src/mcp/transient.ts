/**
 * Which call failures mean "the connection is gone" (worth one reconnect and retry) rather than
 * "the server answered with an error" (final).
 */
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

const NETWORK_PATTERNS = /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|socket hang up|other side closed|fetch failed|Not connected|terminated/i;

export function isTransientTransportError(err: unknown): boolean {
  if (err instanceof McpError) return err.code === (ErrorCode.ConnectionClosed as number);
  if (err instanceof StreamableHTTPError) {
    // 404 is the spec's "session expired"; some servers answer 400 "No valid session ID".
    if (err.code === 404) return true;
    if (err.code === 400 && /session/i.test(err.message)) return true;
    return err.code === undefined || err.code >= 502;
  }
  if (err instanceof SseError) return true;
  if (!(err instanceof Error)) return false;
  const cause = err.cause instanceof Error ? `${err.cause.message} ${(err.cause as { code?: string }).code ?? ""}` : "";
  return NETWORK_PATTERNS.test(`${err.message} ${cause}`);
}
