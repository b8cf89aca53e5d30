/**
 * A WeCom AI-bot message (the body of an `aibot_msg_callback` frame) turned into what the
 * InboundGate takes: text, mixed text and pictures, voice (WeCom's transcription) and files,
 * pictures and files downloaded and decrypted by the SDK into `<home>/media/<channel>/`. A
 * direct chat's id is the sender's user id, a group's its `chatid` (the Python nanobot's ids).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { MediaItem } from "../../bus/types.js";
import type { GateInput } from "../access/inbound-gate.js";

/** The fields of a WeCom message nanobot reads. */
export interface WecomMessage {
  msgid?: string;
  chatid?: string;
  chattype?: string;
  from?: { userid?: string };
  msgtype?: string;
  create_time?: number;
  text?: { content?: string };
  image?: { url?: string; aeskey?: string };
  file?: { url?: string; aeskey?: string; name?: string };
  voice?: { content?: string };
  mixed?: { msg_item?: Array<{ msgtype?: string; text?: { content?: string }; image?: { url?: string; aeskey?: string } }> };
  quote?: { msgtype?: string };
}

interface Download {
  url: string;
  aeskey?: string;
  name?: string;
  kind: MediaItem["kind"];
}

export interface WecomInboundOptions {
  groupPolicy: "mention" | "open";
  mediaDir: string;
  download: (url: string, aeskey: string | undefined) => Promise<{ buffer: Buffer; filename?: string }>;
  onDownloadError?: (error: unknown) => void;
}

export function senderOf(message: WecomMessage): string {
  return message.from?.userid ?? "";
}

export function chatOf(message: WecomMessage): string {
  return message.chatid || senderOf(message);
}

export function isGroup(message: WecomMessage): boolean {
  return message.chattype === "group";
}

/** A leading `@name` (how WeCom writes a mention of the bot into the text). */
const LEADING_MENTION = /^@\S+\s*/;

function kindOf(name: string): MediaItem["kind"] {
  if (/\.(jpe?g|png|gif|webp|bmp)$/i.test(name)) return "image";
  if (/\.(amr|mp3|wav|ogg)$/i.test(name)) return "audio";
  if (/\.(mp4|avi|mov)$/i.test(name)) return "video";
  return "document";
}

function readBody(message: WecomMessage): { parts: string[]; downloads: Download[] } {
  const parts: string[] = [];
  const downloads: Download[] = [];
  const image = (img: { url?: string; aeskey?: string } | undefined): void => {
    if (img?.url) downloads.push({ url: img.url, ...(img.aeskey ? { aeskey: img.aeskey } : {}), kind: "image" });
  };
  switch (message.msgtype) {
    case "text":
      if (message.text?.content) parts.push(message.text.content);
      break;
    case "image":
      image(message.image);
      break;
    case "voice":
      // WeCom transcribes voice messages itself.
      parts.push(message.voice?.content ? `[voice] ${message.voice.content}` : "[voice]");
      break;
    case "file":
      if (message.file?.url) {
        const name = message.file.name;
        downloads.push({ url: message.file.url, ...(message.file.aeskey ? { aeskey: message.file.aeskey } : {}), ...(name ? { name } : {}), kind: name ? kindOf(name) : "document" });
      }
      break;
    case "mixed":
      for (const item of message.mixed?.msg_item ?? []) {
        if (item.msgtype === "text" && item.text?.content) parts.push(item.text.content);
        else if (item.msgtype === "image") image(item.image);
        else parts.push(`[${item.msgtype ?? "item"}]`);
      }
      break;
    default:
      parts.push(`[${message.msgtype ?? "message"}]`);
  }
  return { parts, downloads };
}

export async function toGateInput(message: WecomMessage, options: WecomInboundOptions): Promise<GateInput | undefined> {
  const sender = senderOf(message);
  if (!sender) return undefined;
  const group = isGroup(message);
  const { parts, downloads } = readBody(message);
  let text = parts.join("\n").trim();
  if (group) {
    const mentioned = LEADING_MENTION.test(text);
    if (options.groupPolicy === "mention" && !mentioned && !message.quote) return undefined;
    text = text.replace(LEADING_MENTION, "").trim();
  }
  const msgId = message.msgid || `${chatOf(message)}_${message.create_time ?? ""}`;
  const media = await downloadAll(downloads, msgId, options);
  if (!text && media.length === 0) return undefined;
  const input: GateInput = {
    id: msgId,
    chatId: chatOf(message),
    sender: { id: sender },
    content: text || (media.every((m) => m.kind === "image") ? "[image]" : "[file]"),
    isDirect: !group,
    metadata: { messageId: msgId, msgType: message.msgtype ?? "", chatType: message.chattype ?? "single" },
  };
  if (media.length) input.media = media;
  return input;
}

async function downloadAll(downloads: Download[], msgId: string, options: WecomInboundOptions): Promise<MediaItem[]> {
  const out: MediaItem[] = [];
  for (const [i, item] of downloads.entries()) {
    try {
      const { buffer, filename } = await options.download(item.url, item.aeskey);
      const name = (item.name ?? filename ?? `${item.kind}_${i}`).replace(/[^\w.\-()\u4e00-\u9fff]/g, "_");
      await mkdir(options.mediaDir, { recursive: true });
      const path = join(options.mediaDir, `${msgId.replace(/[^\w.-]/g, "_")}_${name}`);
      await writeFile(path, buffer);
      out.push({ kind: item.kind === "document" ? kindOf(name) : item.kind, path, name });
    } catch (error) {
      options.onDownloadError?.(error);
    }
  }
  return out;
}
