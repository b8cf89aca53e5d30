/**
 * A getupdates message (`WeixinMessage`) as nanobot text and media: text items (a quoted text
 * message is prefixed as `[quoted: …]`), images, voice (WeChat's own transcript when it has one),
 * files and videos downloaded from the CDN. When the message itself carries no media, media it
 * quotes is fetched instead.
 */
import { join } from "node:path";
import type { MediaItem } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { ITEM_FILE, ITEM_IMAGE, ITEM_TEXT, ITEM_VIDEO, ITEM_VOICE, downloadMedia, hasMediaLocator } from "./media.js";
import type { MediaKind, TypedMediaItem } from "./media.js";

export interface WeixinItem {
  type?: number;
  text_item?: { text?: string };
  image_item?: TypedMediaItem;
  voice_item?: TypedMediaItem;
  file_item?: TypedMediaItem;
  video_item?: TypedMediaItem;
  ref_msg?: { title?: string; message_item?: WeixinItem };
}

export interface WeixinMessage {
  message_id?: string | number;
  seq?: string | number;
  from_user_id?: string;
  to_user_id?: string;
  create_time_ms?: number;
  message_type?: number;
  context_token?: string;
  item_list?: WeixinItem[];
}

const MEDIA: Record<number, { kind: MediaKind; key: keyof WeixinItem; as: MediaItem["kind"] }> = {
  [ITEM_IMAGE]: { kind: "image", key: "image_item", as: "image" },
  [ITEM_VOICE]: { kind: "voice", key: "voice_item", as: "audio" },
  [ITEM_FILE]: { kind: "file", key: "file_item", as: "document" },
  [ITEM_VIDEO]: { kind: "video", key: "video_item", as: "video" },
};

export interface ParseContext {
  cdnBaseUrl: string;
  mediaDir: string;
  messageId: string;
  logger: Logger;
}

function quotedText(item: WeixinItem, text: string): string {
  const ref = item.ref_msg;
  if (!ref) return text;
  const quoted = ref.message_item;
  if (quoted?.type !== undefined && MEDIA[quoted.type]) return text;
  const parts = [ref.title, quoted?.text_item?.text].filter((p): p is string => Boolean(p));
  return parts.length ? `[quoted: ${parts.join(" | ")}]\n${text}` : text;
}

export async function parseWeixinMessage(message: WeixinMessage, ctx: ParseContext): Promise<{ content: string; media: MediaItem[] }> {
  const items = message.item_list ?? [];
  const parts: string[] = [];
  const media: MediaItem[] = [];
  let hadMedia = false;

  const fetchItem = async (item: WeixinItem, index: number): Promise<void> => {
    const spec = MEDIA[item.type ?? 0]!;
    const typed = (item[spec.key] ?? {}) as TypedMediaItem;
    if (spec.kind === "voice" && typed.text) {
      parts.push(`[voice] ${typed.text}`);
      return;
    }
    if (hasMediaLocator(typed)) hadMedia = true;
    const fileName = spec.kind === "file" ? (typed.file_name ?? "unknown") : undefined;
    let path: string | undefined;
    try {
      path = await downloadMedia(typed, spec.kind, { cdnBaseUrl: ctx.cdnBaseUrl, dir: ctx.mediaDir, name: `${ctx.messageId}_${index}_${fileName ?? spec.kind}`.replace(/[^\w.-]/g, "_") });
    } catch (error) {
      ctx.logger.warn("weixin media download failed", { kind: spec.kind, error: errorMessage(error) });
    }
    if (path) media.push({ kind: spec.as, path, ...(fileName ? { name: fileName } : {}) });
    if (fileName) parts.push(`[file: ${fileName}]`);
    else if (!path || spec.kind !== "image" || items.length === 1) parts.push(`[${spec.kind}]`);
  };

  for (const [index, item] of items.entries()) {
    if (item.type === ITEM_TEXT) {
      const text = item.text_item?.text ?? "";
      if (text) parts.push(quotedText(item, text));
    } else if (item.type !== undefined && MEDIA[item.type]) {
      await fetchItem(item, index);
    }
  }
  if (!media.length && !hadMedia) {
    const quoted = items.find((i) => i.type === ITEM_TEXT && i.ref_msg?.message_item?.type !== undefined && MEDIA[i.ref_msg.message_item.type]);
    if (quoted) await fetchItem(quoted.ref_msg!.message_item!, items.length);
  }
  return { content: parts.join("\n"), media };
}

export function mediaDirFor(home: string, channel: string): string {
  return join(home, "media", channel);
}
