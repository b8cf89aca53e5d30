/**
 * matrix-js-sdk 36 enforces a request's `localTimeoutMs` with a plain `setTimeout` it never
 * clears: every /sync leaves a 110 s timer behind (poll timeout + 80 s), which keeps a stopped
 * gateway process alive for up to two minutes. The client's HTTP layer is wrapped so the same
 * timeout is enforced by `AbortSignal.timeout`, whose timer does not hold the process open.
 */
import type { MatrixClient } from "matrix-js-sdk";

interface RequestOpts {
  localTimeoutMs?: number;
  abortSignal?: AbortSignal;
}

type RequestOtherUrl = (method: string, url: URL | string, body?: unknown, opts?: RequestOpts) => Promise<unknown>;

export function useReleasableTimeouts(client: MatrixClient): void {
  const http = client.http as unknown as { requestOtherUrl: RequestOtherUrl };
  const original = http.requestOtherUrl.bind(http);
  http.requestOtherUrl = (method, url, body, opts = {}) => {
    const { localTimeoutMs, ...rest } = opts;
    if (localTimeoutMs === undefined) return original(method, url, body, opts);
    const timeout = AbortSignal.timeout(localTimeoutMs);
    const abortSignal = rest.abortSignal ? AbortSignal.any([rest.abortSignal, timeout]) : timeout;
    return original(method, url, body, { ...rest, abortSignal });
  };
}
