/**
 * Feishu Open Platform calls through the official SDK's client (`im.v1.message` create, reply
 * and patch, image and file uploads, message resources, reactions), and how the delivery queue
 * judges their failures. The SDK does not retry; every retry is the delivery queue's, counted
 * against `sendMaxRetries`.
 */
import { createReadStream } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { createWriteStream } from "node:fs";
import type { Readable } from "node:stream";
import type { Client } from "@larksuiteoapi/node-sdk";
import type { MediaItem } from "../../bus/types.js";
import type { RetryDecision } from "../delivery/delivery-queue.js";
import type { FeishuResource } from "./inbound.js";

/** The API answered, but with a non-zero `code` (Feishu reports most failures this way). */
export class FeishuApiError extends Error {
  constructor(
    readonly what: string,
    readonly code: number,
    msg: string,
    readonly status?: number,
  ) {
    super(`feishu ${what} failed: code ${code}${msg ? ` (${msg})` : ""}${status ? `, HTTP ${status}` : ""}`);
    this.name = "FeishuApiError";
  }
}

/** Feishu's "request too frequent" codes: wait and try again. */
const RATE_LIMIT_CODES = new Set([99991400, 230020]);

export function classifyFeishuError(error: unknown): RetryDecision {
  if (error instanceof FeishuApiError) {
    if (RATE_LIMIT_CODES.has(error.code)) return { retryable: true };
    return { retryable: error.status !== undefined && (error.status >= 500 || error.status === 429) };
  }
  if (typeof error !== "object" || error === null) return { retryable: false };
  // An axios error: HTTP status when the server answered, none when the network failed.
  const status = (error as { response?: { status?: unknown } }).response?.status;
  if (typeof status === "number") return { retryable: status >= 500 || status === 429 };
  return { retryable: true };
}

interface ApiBody<T> {
  code?: number;
  msg?: string;
  data?: T;
}

/** Unwraps `{code, msg, data}`; a non-zero code (or an HTTP error's body) becomes a FeishuApiError. */
async function call<T>(what: string, request: () => Promise<ApiBody<T> | null>): Promise<T | undefined> {
  let body: ApiBody<T> | null;
  try {
    body = await request();
  } catch (error) {
    const response = (error as { response?: { status?: number; data?: unknown } }).response;
    const data = response?.data as ApiBody<T> | undefined;
    if (response && typeof data?.code === "number") throw new FeishuApiError(what, data.code, data.msg ?? "", response.status);
    throw error;
  }
  if (body && typeof body.code === "number" && body.code !== 0) throw new FeishuApiError(what, body.code, body.msg ?? "");
  return body?.data;
}

/** For the uploads, which the SDK unwraps to `data` itself (null when the API refused). */
async function upload<T>(what: string, request: () => Promise<T | null>): Promise<T> {
  const data = await call<T>(what, async () => ({ code: 0, data: (await request()) ?? undefined }));
  if (!data) throw new FeishuApiError(what, -1, "the upload was refused");
  return data;
}

/** `oc_…` ids are chats; anything else (a user's `ou_…`) is an open_id, as the Python nanobot. */
export function receiveIdType(chatId: string): "chat_id" | "open_id" {
  return chatId.startsWith("oc_") ? "chat_id" : "open_id";
}

export interface SendTarget {
  chatId: string;
  /** Send with the reply API, quoting this message. */
  replyTo?: string;
  /** With `replyTo`: open (or stay in) a topic. */
  replyInThread?: boolean;
}

export async function sendMessage(client: Client, target: SendTarget, msgType: string, content: string): Promise<string> {
  const data = target.replyTo
    ? await call("message.reply", () =>
        client.im.v1.message.reply({ path: { message_id: target.replyTo! }, data: { msg_type: msgType, content, ...(target.replyInThread ? { reply_in_thread: true } : {}) } }),
      )
    : await call("message.create", () => client.im.v1.message.create({ params: { receive_id_type: receiveIdType(target.chatId) }, data: { receive_id: target.chatId, msg_type: msgType, content } }));
  const id = data?.message_id;
  if (!id) throw new FeishuApiError("message send", -1, "no message_id in the answer");
  return id;
}

/** Replaces a sent card's content (only cards sent with `update_multi` can be patched). */
export async function patchCard(client: Client, messageId: string, content: string): Promise<void> {
  await call("message.patch", () => client.im.v1.message.patch({ path: { message_id: messageId }, data: { content } }));
}

export async function addReaction(client: Client, messageId: string, emojiType: string): Promise<string | undefined> {
  const data = await call("reaction.create", () => client.im.v1.messageReaction.create({ path: { message_id: messageId }, data: { reaction_type: { emoji_type: emojiType } } }));
  return data?.reaction_id;
}

export async function removeReaction(client: Client, messageId: string, reactionId: string): Promise<void> {
  await call("reaction.delete", () => client.im.v1.messageReaction.delete({ path: { message_id: messageId, reaction_id: reactionId } }));
}

const IMAGE_EXTS = new Set([".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".ico", ".tiff", ".tif", ".heic"]);
const AUDIO_EXTS = new Set([".opus"]);
const VIDEO_EXTS = new Set([".mp4", ".mov", ".avi"]);
/** `file_type` of the file upload by extension; "stream" for anything else. */
const FILE_TYPES: Record<string, string> = { ".opus": "opus", ".mp4": "mp4", ".pdf": "pdf", ".doc": "doc", ".docx": "doc", ".xls": "xls", ".xlsx": "xls", ".ppt": "ppt", ".pptx": "ppt" };

/** Images must be under 10 MB and files under 30 MB (the upload APIs' limits). */
const IMAGE_MAX_BYTES = 10 * 1024 * 1024;
const FILE_MAX_BYTES = 30 * 1024 * 1024;

export interface UploadedMedia {
  msgType: "image" | "file" | "audio" | "media";
  content: string;
}

/** Uploads a reply's file and returns the message that shows it; undefined when it cannot be read. */
export async function uploadMedia(client: Client, item: MediaItem): Promise<UploadedMedia | undefined> {
  if (!item.path) return undefined;
  const size = await stat(item.path).then((s) => (s.isFile() ? s.size : -1), () => -1);
  if (size <= 0) return undefined;
  const ext = extname(item.name ?? item.path).toLowerCase();
  if (IMAGE_EXTS.has(ext) && size <= IMAGE_MAX_BYTES) {
    const path = item.path;
    const data = await upload("image.create", () => client.im.v1.image.create({ data: { image_type: "message", image: createReadStream(path) } }));
    if (!data.image_key) throw new FeishuApiError("image.create", -1, "no image_key in the answer");
    return { msgType: "image", content: JSON.stringify({ image_key: data.image_key }) };
  }
  if (size > FILE_MAX_BYTES) return undefined;
  const path = item.path;
  const fileName = item.name ?? basename(path);
  const fileType = (FILE_TYPES[ext] ?? "stream") as "stream";
  const data = await upload("file.create", () => client.im.v1.file.create({ data: { file_type: fileType, file_name: fileName, file: createReadStream(path) } }));
  if (!data.file_key) throw new FeishuApiError("file.create", -1, "no file_key in the answer");
  // Feishu plays `audio` and `media` (video) inline; everything else is a `file`.
  const msgType = AUDIO_EXTS.has(ext) ? "audio" : VIDEO_EXTS.has(ext) ? "media" : "file";
  return { msgType, content: JSON.stringify({ file_key: data.file_key }) };
}

const MIME_EXT: Record<string, string> = { "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "audio/ogg": ".ogg", "audio/opus": ".opus", "video/mp4": ".mp4" };

/** Downloads a message's resource into `dir`; the file name keeps only safe characters. */
export async function downloadResource(client: Client, messageId: string, resource: FeishuResource, dir: string): Promise<MediaItem> {
  const res = await client.im.v1.messageResource.get({ path: { message_id: messageId, file_key: resource.key }, params: { type: resource.type } });
  const headers = (res.headers ?? {}) as Record<string, unknown>;
  const mimeType = typeof headers["content-type"] === "string" ? headers["content-type"].split(";")[0]!.trim() : undefined;
  const given = resource.name ? basename(resource.name).replace(/[^\w.-]/g, "_") : "";
  const name = given || `${resource.key.replace(/[^\w-]/g, "_")}${(mimeType && MIME_EXT[mimeType]) ?? (resource.type === "image" ? ".jpg" : "")}`;
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${messageId.replace(/[^\w-]/g, "_")}_${name}`);
  await pipeline(res.getReadableStream() as Readable, createWriteStream(path));
  const item: MediaItem = { kind: resource.kind, path, name: resource.name ?? name };
  if (mimeType) item.mimeType = mimeType;
  return item;
}
