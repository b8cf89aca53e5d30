/**
 * The one-line progress note a face prints while a provider call waits to be retried:
 * `· retrying in 2 s (ECONNREFUSED)…` — the short cause (an errno or an HTTP status) when the
 * error names one, else the error's first words.
 */
export interface RetryWait {
  attempt: number;
  delayMs: number;
  error: string;
}

export function retryLine(event: RetryWait): string {
  const seconds = event.delayMs >= 1000 ? Math.round(event.delayMs / 1000) : Math.round(event.delayMs / 100) / 10;
  return `· provider call failed, retrying in ${seconds} s (${shortCause(event.error)})…`;
}

/** `ECONNREFUSED`, `HTTP 503`, else the message cut to a few words. */
export function shortCause(message: string): string {
  const errno = /\(([A-Z][A-Z0-9_]{3,})\)/.exec(message)?.[1];
  if (errno) return errno;
  // Provider HTTP errors read `<provider> <status>: …` (providers/error-mapping.ts).
  const status = /^\S+ ([45]\d\d):/.exec(message)?.[1];
  if (status) return `HTTP ${status}`;
  const flat = message.replace(/\s+/g, " ").trim();
  return flat.length > 60 ? `${flat.slice(0, 59)}…` : flat;
}
