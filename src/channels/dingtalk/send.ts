/**
 * What a reply becomes on DingTalk: Markdown robot messages (split at DingTalk's length limit,
 * code blocks kept whole), and files uploaded and sent as image or file messages.
 */
import { readFile } from "node:fs/promises";
import { basename, extname } from "node:path";
import type { MediaItem } from "../../bus/types.js";
import type { DingTalkApi, RobotMessage } from "./openapi.js";

/** DingTalk's limit on a robot message's Markdown text. */
export const DINGTALK_TEXT_LIMIT = 5000;

/** The notification title of a Markdown message (the Python nanobot's). */
export const MARKDOWN_TITLE = "Nanobot Reply";

export function markdown(text: string): RobotMessage {
  return { msgKey: "sampleMarkdown", msgParam: { title: MARKDOWN_TITLE, text } };
}

/** A display name as one bounded line with Markdown's specials escaped: it heads a group reply. */
export function escapeName(name: string): string {
  return name
    .split(/\s+/)
    .filter(Boolean)
    .join(" ")
    .slice(0, 80)
    .replace(/[\\`*_{}[\]()<>#+\-.!|~]/g, (c) => `\\${c}`);
}

type UploadType = "image" | "voice" | "video" | "file";

function uploadType(name: string, kind: MediaItem["kind"]): UploadType {
  if (/\.(jpe?g|png|gif|bmp|webp)$/i.test(name)) return "image";
  if (/\.(amr|mp3|wav|ogg|m4a|aac)$/i.test(name)) return "voice";
  if (/\.(mp4|mov|avi|mkv|webm)$/i.test(name)) return "video";
  return kind === "image" && !extname(name) ? "image" : "file";
}

const MIME: Record<string, string> = { ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".pdf": "application/pdf", ".txt": "text/plain" };

/** What a reply's media item is sent as, or a reason it cannot be. */
export type MediaPlan = { send: () => Promise<void> } | { unreadable: string };

/**
 * A local file is uploaded, then sent as an image message (pictures) or a file message; a remote
 * image URL is handed to DingTalk as the picture's URL; another URL goes out as a link.
 */
export async function planMedia(api: DingTalkApi, chatId: string, item: MediaItem): Promise<MediaPlan> {
  const label = item.name ?? item.path ?? item.url ?? "file";
  if (!item.path && item.url) {
    const url = item.url;
    const isImage = item.kind === "image" || /\.(jpe?g|png|gif|bmp|webp)(\?|$)/i.test(url);
    return {
      send: () =>
        api.sendRobotMessage(chatId, isImage ? { msgKey: "sampleImageMsg", msgParam: { photoURL: url } } : markdown(`[${escapeName(label)}](${url})`)),
    };
  }
  if (!item.path) return { unreadable: label };
  let data: Buffer;
  try {
    data = await readFile(item.path);
  } catch {
    return { unreadable: label };
  }
  const name = item.name ?? basename(item.path);
  const type = uploadType(name, item.kind);
  const contentType = item.mimeType ?? MIME[extname(name).toLowerCase()] ?? "application/octet-stream";
  const fileType = (extname(name).slice(1) || "bin").toLowerCase().replace(/^jpeg$/, "jpg");
  return {
    async send() {
      const mediaId = await api.upload(type, name, data, contentType);
      const message: RobotMessage =
        type === "image" ? { msgKey: "sampleImageMsg", msgParam: { photoURL: mediaId } } : { msgKey: "sampleFile", msgParam: { mediaId, fileName: name, fileType } };
      await api.sendRobotMessage(chatId, message);
    },
  };
}
