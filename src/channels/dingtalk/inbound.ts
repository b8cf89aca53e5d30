/**
 * A robot message from the stream (the `data` of a CALLBACK frame on the robot topic) turned into
 * what the InboundGate takes: text (text, rich text, or a voice message's recognised text),
 * pictures and files fetched by their `downloadCode` into `<home>/media/<channel>/<sender>/`,
 * the group's mention rule, and the Python nanobot's chat ids (`group:<conversationId>` for a
 * group, the sender's staff id for a direct chat).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { MediaItem } from "../../bus/types.js";
import type { GateInput } from "../access/inbound-gate.js";
import { groupChatId } from "./openapi.js";

/** The fields of DingTalk's robot message nanobot reads. */
export interface RobotCallback {
  msgId: string;
  msgtype: string;
  conversationId?: string;
  /** "1": a direct chat; "2": a group. */
  conversationType?: string;
  senderId?: string;
  senderStaffId?: string;
  senderNick?: string;
  chatbotUserId?: string;
  isInAtList?: boolean;
  sessionWebhook?: string;
  sessionWebhookExpiredTime?: number;
  text?: { content?: string; isReplyMsg?: boolean; repliedMsg?: { senderId?: string; msgId?: string } };
  content?: Record<string, unknown>;
}

/** A message's file to fetch: its download code, a name, and what it is. */
export interface Attachment {
  downloadCode: string;
  name: string;
  kind: MediaItem["kind"];
}

export function parseRobotCallback(data: string): RobotCallback | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const message = parsed as RobotCallback;
  return typeof message.msgId === "string" && typeof message.msgtype === "string" ? message : undefined;
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

const IMAGE_EXTS = /\.(jpe?g|png|gif|bmp|webp)$/i;
const AUDIO_EXTS = /\.(amr|mp3|wav|ogg|m4a|aac)$/i;
const VIDEO_EXTS = /\.(mp4|mov|avi|mkv|webm)$/i;

export function kindOfName(name: string): MediaItem["kind"] {
  if (IMAGE_EXTS.test(name)) return "image";
  if (AUDIO_EXTS.test(name)) return "audio";
  if (VIDEO_EXTS.test(name)) return "video";
  return "document";
}

/** Rich-text styles rendered as Markdown, as the Python nanobot does. */
function styled(type: string, text: string): string {
  switch (type) {
    case "bold":
      return `**${text}**`;
    case "italic":
      return `*${text}*`;
    case "inlineCode":
      return `\`${text}\``;
    case "pre":
      return "```\n" + text + "\n```";
    default:
      return text;
  }
}

/** The message's text and the files it carries. */
export function readBody(message: RobotCallback): { text: string; attachments: Attachment[] } {
  const content = message.content ?? {};
  const attachments: Attachment[] = [];
  let text = str(message.text?.content).trim();
  switch (message.msgtype) {
    case "audio":
      // DingTalk transcribes voice messages itself.
      text ||= str(content.recognition).trim();
      break;
    case "picture": {
      const code = str(content.downloadCode) || str(content.pictureDownloadCode);
      if (code) attachments.push({ downloadCode: code, name: "image", kind: "image" });
      break;
    }
    case "file": {
      const code = str(content.downloadCode);
      const name = str(content.fileName) || "file";
      if (code) attachments.push({ downloadCode: code, name, kind: kindOfName(name) });
      break;
    }
    case "richText": {
      const items = Array.isArray(content.richText) ? (content.richText as unknown[]) : [];
      const parts: string[] = [];
      for (const raw of items) {
        if (typeof raw !== "object" || raw === null) continue;
        const item = raw as Record<string, unknown>;
        const piece = str(item.text).trim();
        if (piece) parts.push(styled(str(item.type), piece));
        const code = str(item.downloadCode) || str(item.pictureDownloadCode);
        if (code) {
          const picture = str(item.type) === "picture";
          const name = str(item.fileName) || (picture ? "image" : "file");
          attachments.push({ downloadCode: code, name, kind: picture ? "image" : kindOfName(name) });
        }
      }
      text = [text, ...parts].filter(Boolean).join(" ");
      break;
    }
  }
  return { text, attachments };
}

export interface DingTalkInboundOptions {
  channel: string;
  groupPolicy: "mention" | "open";
  groupUserIsolation: boolean;
  mediaDir: string;
  fetchFile: (downloadCode: string) => Promise<{ data: Uint8Array; contentType: string | undefined }>;
  onDownloadError?: (error: unknown) => void;
}

export function isGroupMessage(message: RobotCallback): boolean {
  return message.conversationType === "2" && !!message.conversationId;
}

export function senderOf(message: RobotCallback): string {
  return message.senderStaffId || message.senderId || "";
}

/** An @ of the robot, or a quote of one of its messages. */
function addressesBot(message: RobotCallback): boolean {
  if (message.isInAtList) return true;
  const quoted = message.text?.isReplyMsg ? message.text.repliedMsg : undefined;
  return !!quoted?.senderId && quoted.senderId === message.chatbotUserId;
}

/** The gate's input, or undefined for a message to ignore (empty, unaddressed in a group, no sender). */
export async function toGateInput(message: RobotCallback, options: DingTalkInboundOptions): Promise<GateInput | undefined> {
  const sender = senderOf(message);
  if (!sender) return undefined;
  const group = isGroupMessage(message);
  if (group && options.groupPolicy === "mention" && !addressesBot(message)) return undefined;
  const { text, attachments } = readBody(message);
  const media = await downloadAll(attachments, sender, message.msgId, options);
  if (!text && media.length === 0) return undefined;
  const chatId = group ? groupChatId(message.conversationId!) : sender;
  const metadata: Record<string, unknown> = {
    messageId: message.msgId,
    senderName: message.senderNick ?? "",
    conversationType: message.conversationType ?? "",
  };
  if (message.text?.isReplyMsg && message.text.repliedMsg?.msgId) metadata.replyToMessageId = message.text.repliedMsg.msgId;
  const input: GateInput = {
    id: message.msgId,
    chatId,
    sender: { id: sender },
    content: text || (media.every((m) => m.kind === "image") ? "[Image]" : "[File]"),
    isDirect: !group,
    metadata,
  };
  if (media.length) input.media = media;
  if (group && options.groupUserIsolation) input.sessionKey = `${options.channel}:${chatId}:${sender}`;
  return input;
}

const EXT_OF_TYPE: Record<string, string> = { "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "image/bmp": ".bmp" };

async function downloadAll(attachments: Attachment[], sender: string, msgId: string, options: DingTalkInboundOptions): Promise<MediaItem[]> {
  const out: MediaItem[] = [];
  for (const [i, attachment] of attachments.entries()) {
    try {
      const { data, contentType } = await options.fetchFile(attachment.downloadCode);
      const mimeType = contentType?.split(";")[0]?.trim() || undefined;
      let name = attachment.name;
      // Pictures come without a name; the extension follows the served type.
      if (!/\.\w+$/.test(name) && mimeType && EXT_OF_TYPE[mimeType]) name += EXT_OF_TYPE[mimeType];
      const dir = join(options.mediaDir, sender.replace(/[^\w.-]/g, "_"));
      await mkdir(dir, { recursive: true });
      const path = join(dir, `${msgId.replace(/[^\w.-]/g, "_")}_${i}_${name.replace(/[^\w.-]/g, "_")}`);
      await writeFile(path, data);
      const kind = attachment.kind === "document" && mimeType?.startsWith("image/") ? "image" : attachment.kind;
      out.push({ kind, path, name, ...(mimeType ? { mimeType } : {}) });
    } catch (error) {
      options.onDownloadError?.(error);
    }
  }
  return out;
}
