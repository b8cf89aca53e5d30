/**
 * Helpers around matrix-js-sdk: attachment downloads from the authenticated media endpoints
 * (`/_matrix/client/v1/media/download`, Matrix 1.11; servers older than that only serve the
 * legacy `/_matrix/media/v3/download`), a small concurrency limit for them
 * (`maxConcurrentMediaDownloads`), and the SDK's log lines routed to the channel's logger.
 */
import type { ICreateClientOpts, MatrixClient } from "matrix-js-sdk";
import type { Logger } from "../../core/logger.js";

/** The bytes behind `mxc`, "too large" past `maxBytes`, undefined when the server has none; throws on network failures. */
export async function downloadMedia(client: MatrixClient, mxc: string, maxBytes: number): Promise<Uint8Array | "too large" | undefined> {
  const token = client.getAccessToken();
  const headers: Record<string, string> = token ? { Authorization: `Bearer ${token}` } : {};
  const authenticated = client.mxcUrlToHttp(mxc, undefined, undefined, undefined, false, true, true);
  const legacy = client.mxcUrlToHttp(mxc, undefined, undefined, undefined, false, true, false);
  for (const url of [authenticated, legacy]) {
    if (!url) continue;
    const response = await fetch(url, { headers });
    // 404/400 M_UNRECOGNIZED: the server predates authenticated media; try the legacy path.
    if (response.status === 404 || response.status === 400) continue;
    if (!response.ok) return undefined;
    if (Number(response.headers.get("content-length") ?? "0") > maxBytes) {
      await response.body?.cancel();
      return "too large";
    }
    const bytes = new Uint8Array(await response.arrayBuffer());
    return bytes.length > maxBytes ? "too large" : bytes;
  }
  return undefined;
}

/** Runs at most `limit` tasks at once; the rest wait in order. */
export class Limiter {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

type SdkLogger = NonNullable<ICreateClientOpts["logger"]>;

/** The SDK's logger interface over the channel's: everything at debug level except errors (warn). */
export function sdkLogger(log: Logger, prefix = "matrix-sdk"): SdkLogger {
  const line = (level: "debug" | "warn") => (...msg: unknown[]): void => {
    log[level](`${prefix}: ${msg.map(describe).join(" ")}`);
  };
  return {
    trace: line("debug"),
    debug: line("debug"),
    info: line("debug"),
    warn: line("debug"),
    error: line("warn"),
    getChild: (namespace: string) => sdkLogger(log, `${prefix}${namespace}`),
  };
}

function describe(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
