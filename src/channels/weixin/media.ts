/**
 * WeChat media over the CDN. Download: `full_url`, else `<cdnBaseUrl>/download?encrypted_query_param=…`,
 * then AES-128-ECB decryption (images may come unencrypted). Upload: `getuploadurl` with the file's
 * size, MD5 and a fresh key, the encrypted bytes POSTed to the CDN, whose `x-encrypted-param`
 * header is what the message then points at.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import type { MediaItem } from "../../bus/types.js";
import { WeixinApi, checkBody } from "./api.js";
import { decryptAesEcb, encryptAesEcb, paddedSize, parseAesKey } from "./aes-ecb.js";

export const ITEM_TEXT = 1;
export const ITEM_IMAGE = 2;
export const ITEM_VOICE = 3;
export const ITEM_FILE = 4;
export const ITEM_VIDEO = 5;

export type MediaKind = "image" | "voice" | "file" | "video";

export interface CdnMedia {
  encrypt_query_param?: string;
  full_url?: string;
  aes_key?: string;
}

/** A media item of a message (`image_item`, `voice_item`, `file_item`, `video_item`). */
export interface TypedMediaItem {
  media?: CdnMedia;
  /** Images: the key as 32 hex characters. */
  aeskey?: string;
  file_name?: string;
  text?: string;
}

const DEFAULT_EXT: Record<MediaKind, string> = { image: ".jpg", voice: ".silk", video: ".mp4", file: "" };

export function hasMediaLocator(item: TypedMediaItem | undefined): boolean {
  return Boolean(item?.media?.encrypt_query_param || item?.media?.full_url?.trim());
}

/** Downloads and decrypts one media item into `dir`; undefined when it has nothing to fetch. */
export async function downloadMedia(item: TypedMediaItem, kind: MediaKind, opts: { cdnBaseUrl: string; dir: string; name: string }): Promise<string | undefined> {
  const media = item.media ?? {};
  const param = media.encrypt_query_param ?? "";
  const fullUrl = media.full_url?.trim() ?? "";
  if (!param && !fullUrl) return undefined;
  const key = item.aeskey ? Buffer.from(item.aeskey, "hex") : media.aes_key ? parseAesKey(media.aes_key) : undefined;
  // Only images may come unencrypted.
  if (!key && kind !== "image") return undefined;
  const fallback = param ? `${opts.cdnBaseUrl}/download?encrypted_query_param=${encodeURIComponent(param)}` : "";
  const candidates = [fullUrl, fallback].filter((url, i, all) => url && all.indexOf(url) === i);
  let data: Buffer | undefined;
  for (const [i, url] of candidates.entries()) {
    try {
      data = Buffer.from(await (await WeixinApi.cdn(url, { method: "GET" })).arrayBuffer());
      break;
    } catch (error) {
      if (i + 1 >= candidates.length) throw error;
    }
  }
  if (!data?.length) return undefined;
  const bytes = key ? decryptAesEcb(data, key) : data;
  await mkdir(opts.dir, { recursive: true });
  const path = join(opts.dir, basename(opts.name) + (extname(opts.name) ? "" : DEFAULT_EXT[kind]));
  await writeFile(path, bytes);
  return path;
}

const IMAGE_EXTS = new Set([".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".tiff", ".ico", ".svg"]);
const VIDEO_EXTS = new Set([".mp4", ".avi", ".mov", ".mkv", ".webm", ".flv"]);
const VOICE_EXTS = new Set([".mp3", ".wav", ".amr", ".silk", ".ogg", ".m4a", ".aac", ".flac"]);

/** The upload media type (1 image, 2 video, 3 file, 4 voice) and the message item it becomes. */
function uploadKind(path: string): { mediaType: number; itemType: number; itemKey: string } {
  const ext = extname(path).toLowerCase();
  if (IMAGE_EXTS.has(ext)) return { mediaType: 1, itemType: ITEM_IMAGE, itemKey: "image_item" };
  if (VIDEO_EXTS.has(ext)) return { mediaType: 2, itemType: ITEM_VIDEO, itemKey: "video_item" };
  if (VOICE_EXTS.has(ext)) return { mediaType: 4, itemType: ITEM_VOICE, itemKey: "voice_item" };
  return { mediaType: 3, itemType: ITEM_FILE, itemKey: "file_item" };
}

/**
 * Encrypts and uploads a local file; returns the message item that shows it. `fileKey` and
 * `aesKey` are stable per delivery part, so a retried upload is the same upload.
 */
export async function uploadMedia(api: WeixinApi, item: MediaItem, opts: { toUserId: string; cdnBaseUrl: string; fileKey: string; aesKey?: Buffer }): Promise<Record<string, unknown>> {
  if (!item.path) throw new Error("WeChat can send only local files");
  const raw = await readFile(item.path);
  const name = item.name ?? basename(item.path);
  const kind = uploadKind(item.name ?? item.path);
  const aesKey = opts.aesKey ?? randomBytes(16);
  const hexKey = aesKey.toString("hex");
  const size = paddedSize(raw.length);
  const upload = checkBody(
    "getuploadurl",
    await api.post("ilink/bot/getuploadurl", {
      filekey: opts.fileKey,
      media_type: kind.mediaType,
      to_user_id: opts.toUserId,
      rawsize: raw.length,
      rawfilemd5: createHash("md5").update(raw).digest("hex"),
      filesize: size,
      no_need_thumb: true,
      aeskey: hexKey,
    }),
  );
  const fullUrl = typeof upload.upload_full_url === "string" ? upload.upload_full_url.trim() : "";
  const param = typeof upload.upload_param === "string" ? upload.upload_param : "";
  if (!fullUrl && !param) throw new Error("WeChat getuploadurl returned no upload_full_url or upload_param");
  const url = fullUrl || `${opts.cdnBaseUrl}/upload?encrypted_query_param=${encodeURIComponent(param)}&filekey=${encodeURIComponent(opts.fileKey)}`;
  const response = await WeixinApi.cdn(url, { method: "POST", headers: { "Content-Type": "application/octet-stream" }, body: encryptAesEcb(raw, aesKey) });
  const downloadParam = response.headers.get("x-encrypted-param");
  if (!downloadParam) throw new Error(`WeChat CDN upload answered without an x-encrypted-param header (HTTP ${response.status})`);
  // The message carries the key as base64 of its hex spelling.
  const body: Record<string, unknown> = { media: { encrypt_query_param: downloadParam, aes_key: Buffer.from(hexKey).toString("base64"), encrypt_type: 1 } };
  if (kind.itemType === ITEM_IMAGE) body.mid_size = size;
  if (kind.itemType === ITEM_VIDEO) body.video_size = size;
  if (kind.itemType === ITEM_FILE) Object.assign(body, { file_name: name, len: String(raw.length) });
  return { type: kind.itemType, [kind.itemKey]: body };
}
