/**
 * The WebSocket wire format. Client → server: `{type:"message", content, chatId?, media?}`.
 * Server → client: `{type:"ready", chatId, clientId}` (`clientId` is the server-issued id the
 * client presents to resume), `{type:"error", error}`, and every outbound bus kind as
 * `{type: kind, ...fields}` (message, delta, stream_end, progress, typing). Chat ids in frames
 * are the client's own labels; the channel scopes them to the client on the bus.
 */
import type { MediaItem, OutboundMessage } from "../../bus/types.js";

export interface ClientMessageFrame {
  type: "message";
  content: string;
  chatId?: string;
  media?: MediaItem[];
}

export type ParsedFrame = { ok: true; frame: ClientMessageFrame } | { ok: false; error: string };

const CHAT_ID = /^[\w:.@-]{1,128}$/;
const MEDIA_KINDS = new Set(["image", "audio", "video", "document"]);

export function isValidChatId(value: string): boolean {
  return CHAT_ID.test(value);
}

export function parseClientFrame(data: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return { ok: false, error: "frame is not JSON" };
  }
  if (typeof value !== "object" || value === null) return { ok: false, error: "frame must be an object" };
  const obj = value as Record<string, unknown>;
  if (obj.type !== "message") return { ok: false, error: `unknown frame type ${JSON.stringify(obj.type)}` };
  if (typeof obj.content !== "string") return { ok: false, error: "content must be a string" };
  const frame: ClientMessageFrame = { type: "message", content: obj.content };
  if (obj.chatId !== undefined) {
    if (typeof obj.chatId !== "string" || !isValidChatId(obj.chatId)) return { ok: false, error: "chatId must be 1-128 characters of [A-Za-z0-9_:.@-]" };
    frame.chatId = obj.chatId;
  }
  if (obj.media !== undefined) {
    if (!Array.isArray(obj.media)) return { ok: false, error: "media must be a list" };
    const media: MediaItem[] = [];
    for (const m of obj.media as unknown[]) {
      const item = m as Partial<MediaItem> | null;
      if (!item || typeof item !== "object" || !MEDIA_KINDS.has(String(item.kind)) || typeof item.url !== "string") {
        return { ok: false, error: "media items need kind and url" };
      }
      media.push({ kind: item.kind!, url: item.url, ...(typeof item.name === "string" ? { name: item.name } : {}), ...(typeof item.mimeType === "string" ? { mimeType: item.mimeType } : {}) });
    }
    frame.media = media;
  }
  if (!frame.content.trim() && !frame.media?.length) return { ok: false, error: "empty message" };
  return { ok: true, frame };
}

/** An outbound bus message as a frame: the kind becomes `type`, the channel is dropped. */
export function outboundFrame(message: OutboundMessage): string {
  const { kind, channel: _channel, ...rest } = message;
  return JSON.stringify({ type: kind, ...rest });
}
