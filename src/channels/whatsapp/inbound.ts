/**
 * Cloud API webhook payloads → messages. A payload holds `entry[].changes[].value` with
 * `metadata` (the business number), `contacts` (profile names) and `messages`; statuses
 * (sent/delivered/read) are ignored. Group messages carry `group_id`; a reply carries
 * `context.id` (the quoted message).
 */
import type { MediaItem } from "../../bus/types.js";

export interface WhatsAppInbound {
  id: string;
  /** The sender's WhatsApp id (their phone number, digits only). */
  from: string;
  name?: string;
  groupId?: string;
  text: string;
  /** The message this one replies to. */
  replyTo?: string;
  media?: { id: string; kind: MediaItem["kind"]; mimeType?: string; filename?: string };
  /** The business number the message was sent to (digits). */
  businessNumber: string;
  phoneNumberId: string;
}

function obj(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function list(value: unknown): Array<Record<string, unknown>> {
  return Array.isArray(value) ? value.map(obj).filter((v): v is Record<string, unknown> => v !== undefined) : [];
}

const MEDIA_TYPES: Record<string, MediaItem["kind"]> = { image: "image", sticker: "image", audio: "audio", video: "video", document: "document" };

export function parseWebhook(payload: Record<string, unknown>): WhatsAppInbound[] {
  const out: WhatsAppInbound[] = [];
  for (const entry of list(payload.entry)) {
    for (const change of list(entry.changes)) {
      const value = obj(change.value);
      if (!value) continue;
      const metadata = obj(value.metadata) ?? {};
      const names = new Map(list(value.contacts).map((c) => [String(c.wa_id ?? ""), String(obj(c.profile)?.name ?? "")]));
      for (const message of list(value.messages)) {
        const type = String(message.type ?? "");
        const from = String(message.from ?? "");
        const id = String(message.id ?? "");
        if (!from || !id) continue;
        const inbound: WhatsAppInbound = {
          id,
          from,
          text: "",
          businessNumber: String(metadata.display_phone_number ?? "").replace(/\D/g, ""),
          phoneNumberId: String(metadata.phone_number_id ?? ""),
        };
        const name = names.get(from);
        if (name) inbound.name = name;
        if (typeof message.group_id === "string" && message.group_id) inbound.groupId = message.group_id;
        const context = obj(message.context);
        if (typeof context?.id === "string") inbound.replyTo = context.id;
        if (type === "text") inbound.text = String(obj(message.text)?.body ?? "");
        const kind = MEDIA_TYPES[type];
        const media = kind ? obj(message[type]) : undefined;
        if (kind && media && typeof media.id === "string") {
          inbound.media = { id: media.id, kind };
          if (typeof media.mime_type === "string") inbound.media.mimeType = media.mime_type;
          if (typeof media.filename === "string") inbound.media.filename = media.filename;
          if (typeof media.caption === "string") inbound.text = media.caption;
        }
        if (!inbound.text && !inbound.media) continue;
        out.push(inbound);
      }
    }
  }
  return out;
}

/** Whether a group message addresses the business: an @mention of its number, or a reply to the bot. */
export function addressesBusiness(message: WhatsAppInbound, isOwnMessage: (id: string) => boolean): boolean {
  if (message.replyTo && isOwnMessage(message.replyTo)) return true;
  return message.businessNumber !== "" && new RegExp(`@\\+?${message.businessNumber}\\b`).test(message.text);
}

export function stripMention(text: string, businessNumber: string): string {
  if (!businessNumber) return text.trim();
  return text
    .replace(new RegExp(`@\\+?${businessNumber}\\b`, "g"), "")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

export function extensionFor(mimeType: string | undefined): string {
  const sub = mimeType?.split("/")[1]?.split(";")[0];
  return sub && /^[\w.+-]+$/.test(sub) ? `.${sub}` : "";
}
