/**
 * Discord messages → gate input. Decides whether a server message is for the bot (mention or
 * reply to one of its messages, per `groupPolicy`), applies `allowChannels`, strips the bot's
 * mention, downloads attachments into the media folder and names a thread's own session.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Attachment, Message } from "discord.js";
import type { MediaItem } from "../../bus/types.js";
import type { GateInput } from "../access/inbound-gate.js";

/** Attachments over this size are not downloaded (as the Python nanobot). */
export const MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;

/** MessageType.Default and MessageType.Reply: the kinds that carry a user's prompt. */
const PROMPT_TYPES: ReadonlySet<number> = new Set([0, 19]);

export interface DiscordInboundOptions {
  channel: string;
  botId: string;
  groupPolicy: "mention" | "open";
  allowChannels: readonly string[];
  mediaDir: string;
  /** Whether `id` is a message this bot sent (a reply to it addresses the bot). */
  isOwnMessage: (id: string) => boolean;
  onDownloadError?: (error: unknown) => void;
}

/** Undefined when the message is not for the bot. */
export async function toGateInput(message: Message, options: DiscordInboundOptions): Promise<GateInput | undefined> {
  // Only the bot's own messages are dropped: other bots may talk to it (multi-agent setups).
  if (message.author.id === options.botId || !PROMPT_TYPES.has(message.type)) return undefined;
  const isDirect = message.guildId === null;
  const parentId = message.channel.isThread() ? message.channel.parentId : null;
  const allowed = options.allowChannels;
  if (allowed.length > 0 && !allowed.includes(message.channelId) && !(parentId && allowed.includes(parentId))) return undefined;
  if (!isDirect && options.groupPolicy === "mention" && !addressesBot(message, options)) return undefined;
  const content = stripMention(message.content, options.botId);
  const media = await downloadAll([...message.attachments.values()], options);
  if (!content && media.length === 0) return undefined;
  const metadata: Record<string, unknown> = { messageId: message.id };
  if (message.guildId) metadata.guildId = message.guildId;
  if (message.reference?.messageId) metadata.replyToMessageId = message.reference.messageId;
  metadata.senderName = message.author.globalName ?? message.author.username;
  const input: GateInput = {
    id: `${message.channelId}:${message.id}`,
    chatId: message.channelId,
    sender: { id: message.author.id, username: message.author.username },
    content,
    isDirect,
    metadata,
  };
  if (media.length) input.media = media;
  if (parentId) {
    // A thread is its own conversation beside its parent channel (the Python nanobot's key).
    metadata.parentChannelId = parentId;
    metadata.threadId = message.channelId;
    input.sessionKey = `${options.channel}:${parentId}:thread:${message.channelId}`;
  }
  return input;
}

function addressesBot(message: Message, options: DiscordInboundOptions): boolean {
  if (message.mentions.users.has(options.botId)) return true;
  if (message.content.includes(`<@${options.botId}>`) || message.content.includes(`<@!${options.botId}>`)) return true;
  if (message.mentions.repliedUser?.id === options.botId) return true;
  const ref = message.reference?.messageId;
  return ref !== undefined && options.isOwnMessage(ref);
}

/** Removes `<@bot>` / `<@!bot>` so a mention followed by `/new` reads `/new`. */
function stripMention(text: string, botId: string): string {
  return text
    .replace(new RegExp(`<@!?${botId}>`, "g"), "")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

function mediaKind(contentType: string | null): MediaItem["kind"] {
  if (contentType?.startsWith("image/")) return "image";
  if (contentType?.startsWith("audio/")) return "audio";
  if (contentType?.startsWith("video/")) return "video";
  return "document";
}

async function downloadAll(attachments: Attachment[], options: DiscordInboundOptions): Promise<MediaItem[]> {
  const out: MediaItem[] = [];
  for (const attachment of attachments) {
    if (attachment.size > MAX_ATTACHMENT_BYTES) continue;
    try {
      const response = await fetch(attachment.url);
      if (!response.ok) throw new Error(`attachment download failed: HTTP ${response.status}`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      await mkdir(options.mediaDir, { recursive: true });
      const safe = (attachment.name || "attachment").replace(/[^\w.-]/g, "_");
      const path = join(options.mediaDir, `${attachment.id}_${safe}`);
      await writeFile(path, bytes);
      const item: MediaItem = { kind: mediaKind(attachment.contentType), path, name: attachment.name };
      if (attachment.contentType) item.mimeType = attachment.contentType;
      out.push(item);
    } catch (error) {
      options.onDownloadError?.(error);
    }
  }
  return out;
}
