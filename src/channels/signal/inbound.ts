/**
 * signal-cli `receive` envelopes → what the channel forwards. Decides whether a group message
 * addresses the bot (a mention of the account, a quote of one of its messages, a leading
 * mention placeholder, the account's number in the text, or a `/command`), strips the bot's
 * mention and copies attachments out of signal-cli's attachment folder into the media folder.
 */
import { copyFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { MediaItem } from "../../bus/types.js";
import { idVariants, senderParts } from "./ids.js";

export interface SignalMention {
  start: number;
  length: number;
  ids: string[];
}

/** One data message, as far as the channel needs it. */
export interface SignalInbound {
  /** The sender's identifiers, phone number first. */
  sender: string[];
  senderName?: string;
  /** The sender's timestamp: Signal's message id (with the author). */
  timestamp: number;
  text: string;
  groupId?: string;
  mentions: SignalMention[];
  /** The quoted message (a reply), when there is one. */
  quote?: { timestamp: number; author: string[] };
  attachments: Array<{ id: string; contentType?: string; filename?: string }>;
}

function obj(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function objs(value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value) ? value.map(obj).filter((v): v is Record<string, unknown> => v !== undefined) : [];
}

function strings(record: Record<string, unknown>, keys: string[]): string[] {
  return keys.map((k) => record[k]).filter((v): v is string => typeof v === "string" && v.length > 0);
}

/** The data message of a `receive` notification; undefined for receipts, typing, sync, reactions and empty messages. */
export function parseReceive(params: Record<string, unknown>): SignalInbound | undefined {
  const envelope = obj(params.envelope);
  const data = obj(envelope?.dataMessage);
  if (!envelope || !data || data.reaction) return undefined;
  const sender = senderParts(envelope);
  if (sender.length === 0) return undefined;
  const text = typeof data.message === "string" ? data.message : "";
  const attachments = objs(data.attachments)
    .filter((a) => typeof a.id === "string" && a.id)
    .map((a) => ({
      id: String(a.id),
      ...(typeof a.contentType === "string" ? { contentType: a.contentType } : {}),
      ...(typeof a.filename === "string" && a.filename ? { filename: a.filename } : {}),
    }));
  if (!text && attachments.length === 0) return undefined;
  const timestamp = typeof data.timestamp === "number" ? data.timestamp : typeof envelope.timestamp === "number" ? envelope.timestamp : 0;
  let groupId: string | undefined;
  for (const group of [obj(data.groupInfo), obj(data.groupV2)]) {
    const id = group ? strings(group, ["groupId", "id", "groupID"])[0] : undefined;
    if (id) {
      groupId = id;
      break;
    }
  }
  const mentions = objs(data.mentions)
    .map((m) => ({ start: Number(m.start ?? 0), length: Number(m.length ?? 0), ids: strings(m, ["number", "uuid", "serviceId", "aci"]) }))
    .filter((m) => Number.isInteger(m.start) && m.start >= 0 && Number.isInteger(m.length) && m.length > 0);
  const quoteRaw = obj(data.quote);
  const quote = quoteRaw && typeof quoteRaw.id === "number" ? { timestamp: quoteRaw.id, author: strings(quoteRaw, ["authorNumber", "author", "authorUuid"]) } : undefined;
  const inbound: SignalInbound = { sender, timestamp, text, mentions, attachments };
  if (typeof envelope.sourceName === "string" && envelope.sourceName) inbound.senderName = envelope.sourceName;
  if (groupId) inbound.groupId = groupId;
  // A group message without a usable id still counts as a group message (never as a DM).
  else if (data.groupInfo !== undefined || data.groupV2 !== undefined) inbound.groupId = sender[0]!;
  if (quote) inbound.quote = quote;
  return inbound;
}

/** Characters Signal clients put where a mention stands when the mention list is missing. */
const PLACEHOLDERS = new Set(["\ufffc", "\ufffd", "\x1b"]);

function leadingPlaceholder(text: string): { start: number; length: number } | undefined {
  const start = text.length - text.trimStart().length;
  const marker = text[start];
  if (marker === undefined || !PLACEHOLDERS.has(marker)) return undefined;
  const next = text[start + 1];
  return next === undefined || /\s/.test(next) ? { start, length: 1 } : undefined;
}

export interface Addressing {
  /** The bot account's identifiers (phone number, and its UUID once known). */
  account: readonly string[];
  /** Whether a message with this timestamp is one the bot sent in this chat. */
  isOwnMessage: (timestamp: number) => boolean;
}

function isAccount(ids: readonly string[], account: readonly string[]): boolean {
  const mine = new Set(account.flatMap(idVariants));
  return ids.flatMap(idVariants).some((v) => mine.has(v));
}

/** Whether a group message is for the bot. */
export function addressesBot(message: SignalInbound, how: Addressing): boolean {
  if (message.text.trim().startsWith("/")) return true;
  if (message.quote && (isAccount(message.quote.author, how.account) || how.isOwnMessage(message.quote.timestamp))) return true;
  if (message.mentions.some((m) => isAccount(m.ids, how.account))) return true;
  // Handle-style mentions come without ids: a leading one counts as the bot's.
  if (message.mentions.some((m) => m.ids.length === 0 && !message.text.slice(0, m.start).trim())) return true;
  if (message.mentions.length === 0 && leadingPlaceholder(message.text)) return true;
  return how.account.some((id) => id.startsWith("+") && message.text.includes(id));
}

/** The text without the bot's mentions (right to left, so earlier offsets stay valid). */
export function stripBotMention(message: SignalInbound, account: readonly string[]): string {
  const spans = message.mentions
    .filter((m) => isAccount(m.ids, account) || (m.ids.length === 0 && !message.text.slice(0, m.start).trim()))
    .map((m) => ({ start: m.start, length: m.length }));
  if (spans.length === 0 && message.mentions.length === 0) {
    const placeholder = leadingPlaceholder(message.text);
    if (placeholder) spans.push(placeholder);
  }
  let text = message.text;
  for (const { start, length } of spans.sort((a, b) => b.start - a.start)) text = text.slice(0, start) + text.slice(start + length);
  return text.replace(/[ \t]{2,}/g, " ").trim();
}

function mediaKind(contentType: string | undefined): MediaItem["kind"] {
  if (contentType?.startsWith("image/")) return "image";
  if (contentType?.startsWith("audio/")) return "audio";
  if (contentType?.startsWith("video/")) return "video";
  return "document";
}

export interface CopiedAttachments {
  media: MediaItem[];
  /** Notes for the content where an attachment could not be read. */
  missing: string[];
}

/** Copies each attachment signal-cli stored (`<attachmentsDir>/<id>`) into `mediaDir`. */
export async function copyAttachments(message: SignalInbound, attachmentsDir: string, mediaDir: string): Promise<CopiedAttachments> {
  const out: CopiedAttachments = { media: [], missing: [] };
  for (const attachment of message.attachments) {
    const name = attachment.filename ?? `attachment_${attachment.id}`;
    try {
      await mkdir(mediaDir, { recursive: true });
      const path = join(mediaDir, `${message.timestamp}_${name.replace(/[^\w.-]/g, "_")}`);
      await copyFile(join(attachmentsDir, attachment.id.replace(/[/\\]/g, "_")), path);
      const item: MediaItem = { kind: mediaKind(attachment.contentType), path, name };
      if (attachment.contentType) item.mimeType = attachment.contentType;
      out.media.push(item);
    } catch {
      out.missing.push(`[attachment: ${name} - not found]`);
    }
  }
  return out;
}
