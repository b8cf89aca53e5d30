/**
 * Files in and out of OneBot messages. In: image, file, voice (`record`) and video segments are
 * fetched from their `url` (a group file without one is asked for with NapCat's `get_file`),
 * capped at `maxImageBytes`, and saved under `<home>/media/<channel>/`. Out: local files go as
 * `base64://` so NapCat may run on another host or in a container; remote files go by URL.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import type { MediaItem } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { Segment } from "./segments.js";

export interface DownloadContext {
  dir: string;
  maxBytes: number;
  now: () => number;
  logger: Logger;
  /** A OneBot action call (for `get_file`). */
  call: (action: string, params: Record<string, unknown>) => Promise<unknown>;
}

const IMAGE_EXT = new Set([".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp"]);
const MIME_BY_EXT: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
  ".pdf": "application/pdf",
  ".mp4": "video/mp4",
  ".amr": "audio/amr",
  ".silk": "audio/silk",
  ".mp3": "audio/mpeg",
};

function safeName(name: string): string {
  return basename(name).replace(/[^\w.-]/g, "_") || "file";
}

function declaredSize(value: unknown): number | undefined {
  const size = typeof value === "string" ? Number(value) : value;
  return typeof size === "number" && Number.isFinite(size) ? size : undefined;
}

function isHttp(value: unknown): value is string {
  return typeof value === "string" && /^https?:\/\//i.test(value);
}

function mediaKind(type: string, name: string, mimeType: string | undefined): MediaItem["kind"] {
  if (type === "image" || mimeType?.startsWith("image/") || IMAGE_EXT.has(extname(name).toLowerCase())) return "image";
  if (type === "record" || mimeType?.startsWith("audio/")) return "audio";
  if (type === "video" || mimeType?.startsWith("video/")) return "video";
  return "document";
}

/** Where the bytes of a segment are: its URL, else (for files) what `get_file` says. */
async function locate(segment: Segment, context: DownloadContext): Promise<{ url?: string; base64?: string; name?: string; size?: number }> {
  const { data } = segment;
  const name = [data.name, data.file_name, data.file].find((v): v is string => typeof v === "string" && v.length > 0 && !isHttp(v));
  if (isHttp(data.url)) return { url: data.url, ...(name ? { name } : {}), ...sized(data.file_size) };
  if (isHttp(data.file)) return { url: data.file, ...(name ? { name } : {}), ...sized(data.file_size) };
  if (segment.type !== "file" || typeof data.file_id !== "string") return {};
  const info = ((await context.call("get_file", { file_id: data.file_id })) ?? {}) as Record<string, unknown>;
  const fileName = typeof info.file_name === "string" ? info.file_name : name;
  const size = sized(info.file_size ?? data.file_size);
  if (isHttp(info.url)) return { url: info.url, ...(fileName ? { name: fileName } : {}), ...size };
  if (typeof info.base64 === "string") return { base64: info.base64, ...(fileName ? { name: fileName } : {}), ...size };
  return {};
}

function sized(value: unknown): { size?: number } {
  const size = declaredSize(value);
  return size === undefined ? {} : { size };
}

/** Reads a response body, giving up once it passes `max` bytes. */
async function readCapped(response: Response, max: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  if (!response.body) return new Uint8Array();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Saves one segment's file; undefined (and a log line) when it cannot or may not be fetched. */
export async function downloadSegment(segment: Segment, index: number, context: DownloadContext): Promise<MediaItem | undefined> {
  try {
    const where = await locate(segment, context);
    if (!where.url && !where.base64) {
      context.logger.warn("napcat: a received file has no address to fetch it from", { type: segment.type });
      return undefined;
    }
    if (where.size !== undefined && where.size > context.maxBytes) {
      context.logger.warn("napcat: received file is larger than maxImageBytes; dropped", { size: where.size, maxImageBytes: context.maxBytes });
      return undefined;
    }
    let bytes: Uint8Array | undefined;
    let mimeType: string | undefined;
    if (where.url) {
      // As the Python nanobot: a redirect could lead anywhere, so it is refused.
      const response = await fetch(where.url, { redirect: "manual" });
      if (response.status >= 300) throw new Error(`HTTP ${response.status}`);
      bytes = await readCapped(response, context.maxBytes);
      mimeType = response.headers.get("content-type")?.split(";")[0]?.trim() || undefined;
    } else {
      bytes = Buffer.from(where.base64!, "base64");
      if (bytes.length > context.maxBytes) bytes = undefined;
    }
    if (!bytes) {
      context.logger.warn("napcat: received file is larger than maxImageBytes; dropped", { maxImageBytes: context.maxBytes });
      return undefined;
    }
    const name = safeName(where.name ?? `${segment.type}-${index}${segment.type === "image" ? ".jpg" : ""}`);
    if (!mimeType || mimeType === "application/octet-stream") mimeType = MIME_BY_EXT[extname(name).toLowerCase()] ?? mimeType;
    await mkdir(context.dir, { recursive: true });
    const path = join(context.dir, `${context.now()}_${index}_${name}`);
    await writeFile(path, bytes);
    return { kind: mediaKind(segment.type, name, mimeType), path, name, ...(mimeType ? { mimeType } : {}) };
  } catch (error) {
    context.logger.warn("napcat: download failed", { type: segment.type, error: errorMessage(error) });
    return undefined;
  }
}

/** Whether an outgoing item travels inside the text message (images) or alone (files, voice, video). */
export function isInlineImage(item: MediaItem): boolean {
  return item.kind === "image" || item.mimeType?.startsWith("image/") === true;
}

/** The segment that sends one outgoing file. */
export async function mediaSegment(item: MediaItem): Promise<Segment> {
  const name = item.name ?? (item.path ? basename(item.path) : item.url ? basename(new URL(item.url).pathname) : "file");
  let file: string;
  if (item.path) file = `base64://${(await readFile(item.path)).toString("base64")}`;
  else if (item.url) file = item.url;
  else throw new Error("napcat: an outgoing file has neither a path nor a url");
  const type = isInlineImage(item) ? "image" : item.kind === "audio" ? "record" : item.kind === "video" ? "video" : "file";
  return { type, data: { file, name } };
}
