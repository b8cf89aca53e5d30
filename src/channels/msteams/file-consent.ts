/**
 * Files other than images reach Teams users through the file-consent flow of personal chats:
 * the bot sends a consent card naming the file; when the user accepts, Teams sends a
 * `fileConsent/invoke` activity with an upload URL in the user's OneDrive; the bot PUTs the
 * bytes there (an upload session, in ranges) and then shows the file with a file-info card.
 * Group chats and channels have no such flow for bots.
 */
import { randomUUID } from "node:crypto";
import type { OutgoingFile } from "./send.js";

export const FILE_CONSENT_CARD = "application/vnd.microsoft.teams.card.file.consent";
export const FILE_INFO_CARD = "application/vnd.microsoft.teams.card.file.info";
export const FILE_CONSENT_INVOKE = "fileConsent/invoke";

/**
 * Bytes per PUT of an upload session: OneDrive wants ranges in multiples of 320 KiB and under
 * 60 MiB; 10 MiB keeps each request short.
 */
export const UPLOAD_RANGE_BYTES = 32 * 320 * 1024;

/** A file waiting for the user's answer to its consent card (read again when accepted). */
export interface PendingUpload {
  chatId: string;
  path: string;
  name: string;
  mimeType: string;
}

/** Where Teams lets the bot put the accepted file (the invoke's `value.uploadInfo`). */
export interface UploadInfo {
  name: string;
  uploadUrl: string;
  contentUrl: string;
  uniqueId?: string;
  fileType?: string;
}

/** A user's answer to a consent card. */
export interface ConsentAnswer {
  action: "accept" | "decline";
  /** The id the bot put in the card's accept/decline context. */
  uploadId: string;
  /** The consent card's activity id (the invoke replies to it). */
  cardId?: string;
  uploadInfo?: UploadInfo;
}

export function consentCard(file: OutgoingFile, uploadId: string): { contentType: string; name: string; content: Record<string, unknown> } {
  return {
    contentType: FILE_CONSENT_CARD,
    name: file.name,
    content: {
      description: `${file.name} (${readableSize(file.data.length)})`,
      sizeInBytes: file.data.length,
      acceptContext: { uploadId },
      declineContext: { uploadId },
    },
  };
}

export function fileInfoCard(info: UploadInfo): { contentType: string; contentUrl: string; name: string; content: Record<string, unknown> } {
  const fileType = info.fileType ?? info.name.split(".").pop() ?? "";
  return {
    contentType: FILE_INFO_CARD,
    contentUrl: info.contentUrl,
    name: info.name,
    content: { ...(info.uniqueId ? { uniqueId: info.uniqueId } : {}), fileType },
  };
}

/** The answer in a `fileConsent/invoke` activity; undefined for any other activity or a malformed one. */
export function readConsentAnswer(activity: Record<string, unknown>): ConsentAnswer | undefined {
  if (activity.type !== "invoke" || activity.name !== FILE_CONSENT_INVOKE) return undefined;
  const value = record(activity.value);
  const action = value?.action;
  const uploadId = record(value?.context)?.uploadId;
  if ((action !== "accept" && action !== "decline") || typeof uploadId !== "string") return undefined;
  const cardId = typeof activity.replyToId === "string" ? activity.replyToId : undefined;
  const info = record(value?.uploadInfo);
  const uploadInfo =
    info && typeof info.uploadUrl === "string" && typeof info.contentUrl === "string"
      ? {
          name: typeof info.name === "string" ? info.name : "file",
          uploadUrl: info.uploadUrl,
          contentUrl: info.contentUrl,
          ...(typeof info.uniqueId === "string" ? { uniqueId: info.uniqueId } : {}),
          ...(typeof info.fileType === "string" ? { fileType: info.fileType } : {}),
        }
      : undefined;
  return { action, uploadId, ...(cardId ? { cardId } : {}), ...(uploadInfo ? { uploadInfo } : {}) };
}

/**
 * PUTs the bytes to the upload session in ranges. The URL is pre-authenticated: no bot token
 * goes with it. Throws with the status on a refused range.
 */
export async function uploadToSession(uploadUrl: string, data: Buffer, options: { rangeBytes?: number; fetch?: typeof fetch } = {}): Promise<void> {
  const rangeBytes = options.rangeBytes ?? UPLOAD_RANGE_BYTES;
  const fetchImpl = options.fetch ?? fetch;
  const protocol = new URL(uploadUrl).protocol;
  if (protocol !== "https:" && protocol !== "http:") throw new Error(`teams upload URL is not http(s): ${protocol}`);
  const total = data.length;
  // An upload session cannot hold an empty file.
  if (total === 0) throw new Error("teams cannot upload an empty file");
  for (let start = 0; start < total; start += rangeBytes) {
    const end = Math.min(start + rangeBytes, total);
    const response = await fetchImpl(uploadUrl, {
      method: "PUT",
      headers: { "content-range": `bytes ${start}-${end - 1}/${total}`, "content-type": "application/octet-stream" },
      body: data.subarray(start, end),
      signal: AbortSignal.timeout(120_000),
    });
    await response.arrayBuffer().catch(() => undefined);
    // The status lets the delivery queue tell a refusal from a hiccup (classifyTeamsError).
    if (!response.ok) throw Object.assign(new Error(`teams file upload refused: HTTP ${response.status}`), { statusCode: response.status });
  }
}

/** Files offered by consent cards, by upload id; the oldest are forgotten. */
export class PendingUploads {
  private readonly pending = new Map<string, PendingUpload>();

  constructor(private readonly capacity = 200) {}

  add(upload: PendingUpload): string {
    const id = randomUUID();
    this.pending.set(id, upload);
    if (this.pending.size > this.capacity) {
      const oldest = this.pending.keys().next().value;
      if (oldest !== undefined) this.pending.delete(oldest);
    }
    return id;
  }

  /** The file for `id` offered in `chatId`, removed; a card answers once. */
  take(id: string, chatId: string): PendingUpload | undefined {
    const upload = this.pending.get(id);
    if (!upload || upload.chatId !== chatId) return undefined;
    this.pending.delete(id);
    return upload;
  }
}

function readableSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
