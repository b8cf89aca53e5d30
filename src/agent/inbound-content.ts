/**
 * Turns an inbound chat message (text + media) into the user content of a turn. Images become
 * image parts (local files read inline, URLs passed through); other media become file parts,
 * or a text note when they cannot be attached, so the model always knows something was sent.
 */
import { readFileSync, statSync } from "node:fs";
import { basename, extname } from "node:path";
import type { InboundMessage, MediaItem } from "../bus/types.js";
import type { UserContentPart } from "../core/messages.js";

/** Larger local files are described, not inlined. */
export const MAX_INLINE_MEDIA_BYTES = 20 * 1024 * 1024;

const IMAGE_TYPES: Readonly<Record<string, string>> = { ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp" };

export function inboundContent(message: Pick<InboundMessage, "content" | "media">): string | UserContentPart[] {
  if (!message.media?.length) return message.content;
  const parts: UserContentPart[] = [];
  if (message.content) parts.push({ type: "text", text: message.content });
  for (const item of message.media) parts.push(mediaPart(item));
  return parts;
}

function mediaPart(item: MediaItem): UserContentPart {
  const name = item.name ?? (item.path ? basename(item.path) : item.url);
  const mimeType = item.mimeType ?? (item.path ? IMAGE_TYPES[extname(item.path).toLowerCase()] : undefined) ?? "application/octet-stream";
  if (item.kind === "image") {
    if (item.url) return { type: "image", mimeType, url: item.url };
    if (item.path) {
      try {
        if (statSync(item.path).size <= MAX_INLINE_MEDIA_BYTES) return { type: "image", mimeType, data: readFileSync(item.path).toString("base64") };
      } catch {
        // Falls through to the note below.
      }
    }
    return { type: "text", text: `[image ${name ?? ""} could not be attached]` };
  }
  if (item.path || item.url) return { type: "file", mimeType, ...(name ? { name } : {}), ...(item.path ? { path: item.path } : {}), ...(item.url ? { url: item.url } : {}) };
  return { type: "text", text: `[${item.kind} ${name ?? ""} could not be attached]` };
}
