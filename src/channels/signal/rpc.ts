/**
 * signal-cli's JSON-RPC over HTTP (`signal-cli daemon --http`): one `POST /api/v1/rpc` per call.
 * signal-cli has no maintained Node SDK, so nanobot speaks the wire format with `fetch`.
 * Failures keep what the delivery queue needs to judge them: the HTTP status, or the JSON-RPC
 * error code when the daemon answered but refused.
 */
import type { RetryDecision } from "../delivery/delivery-queue.js";

const RPC_TIMEOUT_MS = 60_000;

export class SignalRpcError extends Error {
  constructor(
    message: string,
    /** HTTP status when the daemon answered with one other than 200. */
    readonly status?: number,
    /** The JSON-RPC error code when the daemon refused the call. */
    readonly code?: number,
  ) {
    super(message);
    this.name = "SignalRpcError";
  }
}

/**
 * signal-cli's JSON-RPC error codes worth trying again: -3 (IO_ERROR: the daemon could not reach
 * Signal's servers) and -5 (rate limited, newer signal-cli). -1 (user error: unregistered
 * recipient, bad group id) and -4 (untrusted identity key) would fail the same way again.
 */
const RETRYABLE_CODES: ReadonlySet<number> = new Set([-3, -5]);

export function classifySignalError(error: unknown): RetryDecision {
  if (error instanceof SignalRpcError) {
    if (error.status !== undefined) return { retryable: error.status >= 500 || error.status === 429 };
    if (error.code !== undefined) return { retryable: RETRYABLE_CODES.has(error.code) };
  }
  // Network: refused, reset, timed out.
  return { retryable: true };
}

export class SignalRpc {
  private nextId = 1;

  constructor(private readonly baseUrl: string) {}

  get url(): string {
    return this.baseUrl;
  }

  async call<T = unknown>(method: string, params?: Record<string, unknown>, timeoutMs = RPC_TIMEOUT_MS): Promise<T> {
    const request = { jsonrpc: "2.0", method, id: this.nextId++, ...(params ? { params } : {}) };
    const response = await fetch(`${this.baseUrl}/api/v1/rpc`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(request),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    if (!response.ok) throw new SignalRpcError(`signal-cli ${method}: HTTP ${response.status} ${text.slice(0, 200)}`.trim(), response.status);
    let body: { result?: unknown; error?: { code?: unknown; message?: unknown } };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new SignalRpcError(`signal-cli ${method}: the daemon's answer is not JSON`, response.status);
    }
    if (body.error) {
      const code = typeof body.error.code === "number" ? body.error.code : undefined;
      throw new SignalRpcError(`signal-cli ${method}: ${String(body.error.message ?? "error")}${code !== undefined ? ` (code ${code})` : ""}`, undefined, code);
    }
    return body.result as T;
  }

  /** `GET /api/v1/check`: the daemon is up. */
  async check(signal?: AbortSignal): Promise<void> {
    const response = await fetch(`${this.baseUrl}/api/v1/check`, { signal: signal ?? AbortSignal.timeout(10_000) });
    await response.body?.cancel();
    if (!response.ok) throw new SignalRpcError(`signal-cli daemon check at ${this.baseUrl}: HTTP ${response.status}`, response.status);
  }
}
