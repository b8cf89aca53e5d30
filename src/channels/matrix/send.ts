/**
 * Matrix room events the bot sends (text with its HTML body, edits, replies, files) through
 * matrix-js-sdk, and how the delivery queue judges their failures. The client has no
 * scheduler, so the SDK does not retry: every retry is the delivery queue's, counted against
 * `sendMaxRetries`. A delivery's transaction id is derived from its delivery key, so a retry
 * after a lost response is answered by the homeserver with the first event, not a second one.
 */
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { basename, extname } from "node:path";
import type { MatrixClient, Method } from "matrix-js-sdk";
import type { MediaItem } from "../../bus/types.js";
import type { RetryDecision } from "../delivery/delivery-queue.js";
import type { EncryptedFile } from "./attachment-crypto.js";
import { markdownToMatrixHtml } from "./markdown-html.js";

/**
 * Matrix has no message length limit, only a 64 KiB limit on the whole event (body and
 * formatted body together); 8000 characters keeps even CJK text with its HTML well below it.
 */
export const MATRIX_TEXT_LIMIT = 8000;

export const HTML_FORMAT = "org.matrix.custom.html";

export function classifyMatrixError(error: unknown): RetryDecision {
  if (typeof error !== "object" || error === null) return { retryable: false };
  const e = error as { httpStatus?: unknown; getRetryAfterMs?: () => number | null; name?: unknown };
  if (typeof e.httpStatus === "number") {
    if (e.httpStatus === 429) {
      let after: number | null = null;
      try {
        after = e.getRetryAfterMs?.() ?? null;
      } catch {
        after = null;
      }
      return after !== null && after >= 0 ? { retryable: true, retryAfterMs: after } : { retryable: true };
    }
    return { retryable: e.httpStatus >= 500 };
  }
  // ConnectionError, TypeError("fetch failed"), timeouts: the network.
  return { retryable: true };
}

/** A transaction id the homeserver deduplicates on: one per delivery key. */
export function txnIdFor(key: string): string {
  return `nb${createHash("sha256").update(key).digest("hex").slice(0, 32)}`;
}

/** Where a message goes in the room's conversation. */
export interface Placement {
  /** `m.in_reply_to` this event. */
  replyTo?: string;
  /** The thread root when the asking message was in a thread. */
  threadRoot?: string;
}

export type RoomContent = Record<string, unknown>;

function relation(placement: Placement): Record<string, unknown> | undefined {
  if (placement.threadRoot) {
    return {
      rel_type: "m.thread",
      event_id: placement.threadRoot,
      "m.in_reply_to": { event_id: placement.replyTo ?? placement.threadRoot },
      // A reply inside the thread; clients without threads show it as a reply.
      is_falling_back: placement.replyTo === undefined,
    };
  }
  if (placement.replyTo) return { "m.in_reply_to": { event_id: placement.replyTo } };
  return undefined;
}

/** `m.text` with the markdown rendered to HTML; the bot's text mentions nobody (`m.mentions` empty). */
export function textContent(text: string, placement: Placement = {}): RoomContent {
  const content: RoomContent = { msgtype: "m.text", body: text, "m.mentions": {} };
  const html = markdownToMatrixHtml(text);
  if (html) {
    content.format = HTML_FORMAT;
    content.formatted_body = html;
  }
  const relatesTo = relation(placement);
  if (relatesTo) content["m.relates_to"] = relatesTo;
  return content;
}

/** An edit of `eventId` (`m.replace`); clients without edits show the `* `-prefixed fallback. */
export function editContent(eventId: string, text: string): RoomContent {
  const next = textContent(text);
  const fallback: RoomContent = { ...next, body: `* ${text}` };
  if (typeof next.formatted_body === "string") fallback.formatted_body = `* ${next.formatted_body}`;
  return { ...fallback, "m.new_content": next, "m.relates_to": { rel_type: "m.replace", event_id: eventId } };
}

/**
 * `PUT /rooms/{room}/send/{type}/{txnId}` through the SDK's authenticated HTTP layer (`type` is
 * `m.room.encrypted` for content already encrypted for an encrypted room).
 * Not `client.sendEvent`: that keeps a local echo per transaction id and refuses to send the
 * same id twice, while a delivery retry must reuse its id for the homeserver to deduplicate.
 */
export async function sendContent(client: MatrixClient, roomId: string, content: RoomContent, txnId = client.makeTxnId(), type = "m.room.message"): Promise<string> {
  const path = `/rooms/${encodeURIComponent(roomId)}/send/${encodeURIComponent(type)}/${encodeURIComponent(txnId)}`;
  const sent = await client.http.authedRequest<{ event_id: string }>("PUT" as Method, path, undefined, content);
  return sent.event_id;
}

export interface LoadedFile {
  name: string;
  data: Buffer;
  mimeType: string;
}

const MIME_BY_EXT: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".svg": "image/svg+xml",
  ".mp3": "audio/mpeg",
  ".ogg": "audio/ogg",
  ".wav": "audio/wav",
  ".m4a": "audio/mp4",
  ".mp4": "video/mp4",
  ".webm": "video/webm",
  ".pdf": "application/pdf",
  ".txt": "text/plain",
  ".md": "text/markdown",
  ".json": "application/json",
  ".csv": "text/csv",
  ".zip": "application/zip",
};

export type LoadResult = { file: LoadedFile } | { problem: "unreadable" | "too large" };

/** Reads a reply's file, refusing it past `maxBytes`. */
export async function loadFile(item: MediaItem, maxBytes: number): Promise<LoadResult> {
  if (!item.path) return { problem: "unreadable" };
  try {
    const info = await stat(item.path);
    if (!info.isFile()) return { problem: "unreadable" };
    if (maxBytes <= 0 || info.size > maxBytes) return { problem: "too large" };
    const data = await readFile(item.path);
    const name = item.name ?? basename(item.path);
    const mimeType = item.mimeType ?? MIME_BY_EXT[extname(name).toLowerCase()] ?? "application/octet-stream";
    return { file: { name, data, mimeType } };
  } catch {
    return { problem: "unreadable" };
  }
}

/** Uploads to the media repository; the `mxc://` URI. Ciphertext goes up without its name or type. */
export async function uploadFile(client: MatrixClient, file: LoadedFile, ciphertext?: Buffer): Promise<string> {
  const uploaded = ciphertext
    ? await client.uploadContent(ciphertext, { type: "application/octet-stream", includeFilename: false })
    : await client.uploadContent(file.data, { name: file.name, type: file.mimeType, includeFilename: true });
  return uploaded.content_uri;
}

/**
 * The room event that shows an uploaded file (`m.image`, `m.audio`, `m.video`, else `m.file`):
 * `url` for a plain upload, `file` (key, iv, hash) for an encrypted one.
 */
export function fileContent(file: LoadedFile, source: string | EncryptedFile, placement: Placement = {}): RoomContent {
  const prefix = file.mimeType.split("/")[0];
  const msgtype = prefix === "image" ? "m.image" : prefix === "audio" ? "m.audio" : prefix === "video" ? "m.video" : "m.file";
  const content: RoomContent = {
    msgtype,
    body: file.name,
    filename: file.name,
    ...(typeof source === "string" ? { url: source } : { file: source }),
    info: { mimetype: file.mimeType, size: file.data.length },
    "m.mentions": {},
  };
  const relatesTo = relation(placement);
  if (relatesTo) content["m.relates_to"] = relatesTo;
  return content;
}
