/**
 * What Teams sends look like and how the delivery queue judges their failures (the
 * ConnectorClient itself is built in `connector.ts`, loaded with the SDK).
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { MediaItem } from "../../bus/types.js";
import type { RetryDecision } from "../delivery/delivery-queue.js";
import { TeamsTokenError, UntrustedServiceUrlError } from "./errors.js";

/**
 * Characters per message. Teams refuses activities over about 28 KB (UTF-8, with the markup it
 * renders from Markdown); 4000 characters stay under it even for 4-byte characters and keep a
 * message readable.
 */
export const TEAMS_TEXT_LIMIT = 4000;

export function classifyTeamsError(error: unknown): RetryDecision {
  if (error instanceof UntrustedServiceUrlError) return { retryable: false };
  if (error instanceof TeamsTokenError) return { retryable: error.status === 0 || error.status === 429 || error.status >= 500 };
  if (typeof error !== "object" || error === null) return { retryable: false };
  const e = error as { statusCode?: unknown; response?: { headers?: { get?: (name: string) => string | undefined } } };
  if (typeof e.statusCode === "number") {
    if (e.statusCode === 429) {
      const after = Number(e.response?.headers?.get?.("retry-after"));
      return Number.isFinite(after) && after > 0 ? { retryable: true, retryAfterMs: after * 1000 } : { retryable: true };
    }
    return { retryable: e.statusCode >= 500 };
  }
  // No status: the connection (refused, reset, timed out).
  return { retryable: true };
}

export interface OutgoingFile {
  name: string;
  contentType: string;
  data: Buffer;
}

/** Reads a reply's file; undefined when it has no local path or cannot be read. */
export async function loadFile(item: MediaItem): Promise<OutgoingFile | undefined> {
  if (!item.path) return undefined;
  try {
    const data = await readFile(item.path);
    return { name: item.name ?? basename(item.path), contentType: item.mimeType ?? guessType(item), data };
  } catch {
    return undefined;
  }
}

function guessType(item: MediaItem): string {
  const ext = (item.name ?? item.path ?? "").toLowerCase().split(".").pop() ?? "";
  const known: Record<string, string> = { png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", pdf: "application/pdf", txt: "text/plain", md: "text/markdown", json: "application/json", csv: "text/csv" };
  if (known[ext]) return known[ext];
  if (item.kind === "image") return "image/png";
  return "application/octet-stream";
}

/** An inline attachment (a `data:` URL): how images go out; other files take the consent flow (file-consent.ts). */
export function inlineAttachment(file: OutgoingFile): { contentType: string; contentUrl: string; name: string } {
  return { contentType: file.contentType, contentUrl: `data:${file.contentType};base64,${file.data.toString("base64")}`, name: file.name };
}
