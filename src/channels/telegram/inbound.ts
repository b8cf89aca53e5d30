/**
 * Telegram updates → gate input. Decides whether a group message is addressed to the bot
 * (mention, reply to the bot, `/command@bot`), strips the mention, and downloads attached
 * photos and documents into the media folder.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { extname, join } from "node:path";
import type { Message, MessageEntity } from "grammy/types";
import type { MediaItem } from "../../bus/types.js";
import type { GateInput } from "../access/inbound-gate.js";

export interface BotIdentity {
  id: number;
  username: string;
}

export interface TelegramInboundOptions {
  channel: string;
  bot: BotIdentity;
  groupPolicy: "mention" | "open";
  /** Downloads one file; undefined when it could not be fetched (the text still goes through). */
  download: (fileId: string, item: Omit<MediaItem, "path">, uniqueId: string) => Promise<MediaItem | undefined>;
}

/** Undefined when the message is not for the bot (a group message that does not address it). */
export async function toGateInput(message: Message, options: TelegramInboundOptions): Promise<GateInput | undefined> {
  const from = message.from;
  if (!from || from.is_bot) return undefined;
  const isDirect = message.chat.type === "private";
  const raw = message.text ?? message.caption ?? "";
  const entities = message.entities ?? message.caption_entities ?? [];
  if (!isDirect && options.groupPolicy === "mention" && !addressesBot(message, raw, entities, options.bot)) return undefined;
  const content = stripMention(raw, options.bot.username);
  const media = await downloadAll(message, options);
  if (!content && media.length === 0) return undefined;
  const chatId = String(message.chat.id);
  const metadata: Record<string, unknown> = {
    // A string, as the agent layer reads it for `replyTo`.
    messageId: String(message.message_id),
    chatType: message.chat.type,
  };
  if (message.reply_to_message) metadata.replyToMessageId = message.reply_to_message.message_id;
  if (message.is_topic_message && message.message_thread_id !== undefined) metadata.messageThreadId = message.message_thread_id;
  if (from.first_name) metadata.senderName = [from.first_name, from.last_name].filter(Boolean).join(" ");
  const input: GateInput = {
    id: `${chatId}:${message.message_id}`,
    chatId,
    sender: from.username ? { id: String(from.id), username: from.username } : { id: String(from.id) },
    content,
    isDirect,
    metadata,
  };
  if (media.length) input.media = media;
  // Forum topics are separate conversations.
  if (metadata.messageThreadId !== undefined) input.sessionKey = `${options.channel}:${chatId}:${String(metadata.messageThreadId)}`;
  return input;
}

function addressesBot(message: Message, text: string, entities: readonly MessageEntity[], bot: BotIdentity): boolean {
  if (message.reply_to_message?.from?.id === bot.id) return true;
  const handle = `@${bot.username}`.toLowerCase();
  for (const entity of entities) {
    const slice = text.slice(entity.offset, entity.offset + entity.length).toLowerCase();
    if (entity.type === "mention" && slice === handle) return true;
    if (entity.type === "text_mention" && entity.user.id === bot.id) return true;
    if (entity.type === "bot_command" && slice.endsWith(handle)) return true;
  }
  return false;
}

/** Removes `@bot` mentions and the `@bot` suffix of `/command@bot`, so commands read `/new`. */
function stripMention(text: string, username: string): string {
  const escaped = username.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text
    .replace(new RegExp(`^(/\\w+)@${escaped}\\b`, "i"), "$1")
    .replace(new RegExp(`(^|\\s)@${escaped}\\b`, "gi"), "$1")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

async function downloadAll(message: Message, options: TelegramInboundOptions): Promise<MediaItem[]> {
  const wanted: Array<{ fileId: string; uniqueId: string; item: Omit<MediaItem, "path"> }> = [];
  const photo = message.photo?.[message.photo.length - 1];
  if (photo) wanted.push({ fileId: photo.file_id, uniqueId: photo.file_unique_id, item: { kind: "image", mimeType: "image/jpeg" } });
  const doc = message.document;
  if (doc) {
    const kind = doc.mime_type?.startsWith("image/") ? "image" : "document";
    const item: Omit<MediaItem, "path"> = { kind };
    if (doc.mime_type) item.mimeType = doc.mime_type;
    if (doc.file_name) item.name = doc.file_name;
    wanted.push({ fileId: doc.file_id, uniqueId: doc.file_unique_id, item });
  }
  const audio = message.voice ?? message.audio;
  if (audio) wanted.push({ fileId: audio.file_id, uniqueId: audio.file_unique_id, item: { kind: "audio", mimeType: audio.mime_type ?? "audio/ogg" } });
  if (message.video) wanted.push({ fileId: message.video.file_id, uniqueId: message.video.file_unique_id, item: { kind: "video", mimeType: message.video.mime_type ?? "video/mp4" } });
  const out: MediaItem[] = [];
  for (const w of wanted) {
    const media = await options.download(w.fileId, w.item, w.uniqueId);
    if (media) out.push(media);
  }
  return out;
}

/** Fetches `<apiRoot>/file/bot<token>/<filePath>` into `dir`, named by the file's unique id. */
export async function downloadTelegramFile(options: {
  fileUrl: string;
  filePath: string;
  uniqueId: string;
  dir: string;
  name?: string;
  fetch?: typeof fetch;
}): Promise<string> {
  const response = await (options.fetch ?? fetch)(options.fileUrl);
  if (!response.ok) throw new Error(`file download failed: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  await mkdir(options.dir, { recursive: true });
  const ext = extname(options.name ?? "") || extname(options.filePath);
  const safeId = options.uniqueId.replace(/[^\w-]/g, "_");
  const target = join(options.dir, `${safeId}${ext}`);
  await writeFile(target, bytes);
  return target;
}
