/**
 * Matrix room messages → gate input. Decides whether a message in a room of more than two
 * members is for the bot (`groupPolicy`: open, mention — `m.mentions`, the bot's id or name in
 * the text, a reply to the bot — or allowlist), strips the bot's name from the front, downloads
 * attachments into the media folder and names a thread's own session.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { MatrixEvent, Room } from "matrix-js-sdk";
import type { MediaItem } from "../../bus/types.js";
import type { GateInput } from "../access/inbound-gate.js";
import { decryptAttachment, isEncryptedFile } from "./attachment-crypto.js";

/** Message types that carry a user's prompt. `m.notice` is what bots send: never answered (no bot loops). */
const TEXT_TYPES: ReadonlySet<string> = new Set(["m.text", "m.emote"]);
const MEDIA_KINDS: Readonly<Record<string, MediaItem["kind"]>> = { "m.image": "image", "m.audio": "audio", "m.video": "video", "m.file": "document" };

export interface MatrixInboundOptions {
  channel: string;
  botId: string;
  groupPolicy: "open" | "mention" | "allowlist";
  groupAllowFrom: readonly string[];
  allowRoomMentions: boolean;
  maxMediaBytes: number;
  mediaDir: string;
  /** Whether `eventId` is a message this bot sent (a reply to it addresses the bot). */
  isOwnMessage: (eventId: string) => boolean;
  /** Fetches an `mxc://` URI's bytes (authenticated media); undefined when it failed. */
  download: (mxc: string, maxBytes: number) => Promise<Uint8Array | "too large" | undefined>;
}

type Content = Record<string, unknown>;

function record(value: unknown): Content | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Content) : undefined;
}

/** A room of at most two members (the user and the bot) is a direct chat, as the Python nanobot. */
export function isDirectRoom(room: Room): boolean {
  return room.getInvitedAndJoinedMemberCount() <= 2;
}

/** Undefined when the event is not a prompt for the bot. */
export async function toGateInput(event: MatrixEvent, room: Room, options: MatrixInboundOptions): Promise<GateInput | undefined> {
  const sender = event.getSender();
  const eventId = event.getId();
  if (event.getType() !== "m.room.message" || !sender || !eventId || sender === options.botId) return undefined;
  const content = event.getContent() as Content;
  const relatesTo = record(content["m.relates_to"]);
  // An edit of an earlier message is not a new prompt.
  if (relatesTo?.rel_type === "m.replace") return undefined;
  const msgtype = typeof content.msgtype === "string" ? content.msgtype : "";
  const mediaKind = MEDIA_KINDS[msgtype];
  if (!TEXT_TYPES.has(msgtype) && !mediaKind) return undefined;
  const roomId = room.roomId;
  const isDirect = isDirectRoom(room);
  const replyTo = record(relatesTo?.["m.in_reply_to"])?.event_id;
  const botName = room.getMember(options.botId)?.rawDisplayName;
  if (!isDirect && !groupAccepts(content, roomId, typeof replyTo === "string" ? replyTo : undefined, botName, options)) return undefined;

  let text = typeof content.body === "string" ? content.body : "";
  if (typeof replyTo === "string") text = stripReplyFallback(text);
  const media: MediaItem[] = [];
  if (mediaKind) {
    const fileName = typeof content.filename === "string" && content.filename ? content.filename : text || "attachment";
    // Since Matrix 1.10 a media body differs from the file name only when it is a caption.
    text = typeof content.filename === "string" && content.filename && text !== content.filename ? text : "";
    const fetched = await fetchMedia(content, mediaKind, fileName, eventId, options);
    if ("item" in fetched) media.push(fetched.item);
    else text = [text, `[attachment: ${fileName} - ${fetched.problem}]`].filter(Boolean).join("\n");
  }
  text = stripMention(text, options.botId, botName);
  if (!text && media.length === 0) return undefined;

  const metadata: Record<string, unknown> = { messageId: eventId, roomId };
  const roomName = room.name;
  if (roomName && roomName !== roomId) metadata.roomName = roomName;
  const senderName = room.getMember(sender)?.rawDisplayName;
  if (senderName) metadata.senderName = senderName;
  if (typeof replyTo === "string") metadata.replyToMessageId = replyTo;
  const input: GateInput = {
    id: `${roomId}:${eventId}`,
    chatId: roomId,
    // Matrix ids start with "@", which allowFrom reads as a username: both fields carry the id.
    sender: { id: sender, username: sender },
    content: text,
    isDirect,
    metadata,
  };
  if (media.length) input.media = media;
  const threadRoot = relatesTo?.rel_type === "m.thread" && typeof relatesTo.event_id === "string" ? relatesTo.event_id : undefined;
  if (threadRoot) {
    metadata.threadRootEventId = threadRoot;
    input.sessionKey = `${options.channel}:${roomId}:thread:${threadRoot}`;
  }
  return input;
}

function groupAccepts(content: Content, roomId: string, replyTo: string | undefined, botName: string | undefined, options: MatrixInboundOptions): boolean {
  if (options.groupPolicy === "open") return true;
  if (options.groupPolicy === "allowlist") return options.groupAllowFrom.includes(roomId);
  const mentions = record(content["m.mentions"]);
  const userIds = mentions?.user_ids;
  if (Array.isArray(userIds) && userIds.includes(options.botId)) return true;
  if (options.allowRoomMentions && mentions?.room === true) return true;
  if (replyTo !== undefined && options.isOwnMessage(replyTo)) return true;
  // Clients without intentional mentions: the bot's id, or its display name as a word, in the text.
  const body = typeof content.body === "string" ? content.body : "";
  if (body.includes(options.botId)) return true;
  if (botName && new RegExp(`(^|[^\\w])${escapeRegExp(botName)}([^\\w]|$)`, "i").test(body)) return true;
  const html = typeof content.formatted_body === "string" ? content.formatted_body : "";
  return html.includes(`https://matrix.to/#/${options.botId}`) || html.includes(`https://matrix.to/#/${encodeURIComponent(options.botId)}`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Removes a leading "Bot:"/"@bot:server" address so "nanobot: /new" reads "/new". */
function stripMention(text: string, botId: string, botName: string | undefined): string {
  const names = [botName, botId.slice(1).split(":")[0]].filter((n): n is string => Boolean(n)).map(escapeRegExp);
  // The full id may stand alone ("@bot:server hi"); a bare name only as an address ("Bot: hi").
  const lead = new RegExp(`^\\s*(?:${escapeRegExp(botId)}[:,]?|@?(?:${names.join("|")})[:,])(?:\\s+|$)`, "i");
  return text.replace(lead, "").replaceAll(botId, "").replace(/[ \t]{2,}/g, " ").trim();
}

/** Older clients quote the replied-to message ("> <@user> text") before the reply itself. */
function stripReplyFallback(text: string): string {
  const lines = text.split("\n");
  if (!lines[0]?.startsWith("> ")) return text;
  let i = 0;
  while (i < lines.length && lines[i]!.startsWith(">")) i++;
  return lines.slice(i).join("\n").trim();
}

async function fetchMedia(
  content: Content,
  kind: MediaItem["kind"],
  fileName: string,
  eventId: string,
  options: MatrixInboundOptions,
): Promise<{ item: MediaItem } | { problem: string }> {
  // In an encrypted room the attachment is ciphertext; its key came inside the decrypted event.
  const encrypted = isEncryptedFile(content.file) ? content.file : undefined;
  const url = encrypted ? encrypted.url : content.url;
  if (typeof url !== "string" || !url.startsWith("mxc://")) return { problem: "download failed" };
  const info = record(content.info);
  const declared = typeof info?.size === "number" ? info.size : undefined;
  if (options.maxMediaBytes <= 0 || (declared !== undefined && declared > options.maxMediaBytes)) return { problem: "too large" };
  let bytes = await options.download(url, options.maxMediaBytes);
  if (bytes === undefined || bytes === "too large") return { problem: bytes ?? "download failed" };
  if (encrypted) {
    try {
      bytes = decryptAttachment(bytes, encrypted);
    } catch {
      return { problem: "could not be decrypted" };
    }
  }
  await mkdir(options.mediaDir, { recursive: true });
  const safe = fileName.replace(/[^\w.-]/g, "_").slice(-80) || "attachment";
  const path = join(options.mediaDir, `${eventId.replace(/[^\w-]/g, "").slice(0, 24)}_${safe}`);
  await writeFile(path, bytes);
  const item: MediaItem = { kind, path, name: fileName };
  if (typeof info?.mimetype === "string") item.mimeType = info.mimetype;
  return { item };
}
