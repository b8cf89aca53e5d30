/**
 * Teams activities → gate input. A personal chat is a direct message; a group chat or channel
 * message is for the bot when it @mentions the bot (a `mention` entity naming the recipient) or
 * replies to one of the bot's messages, per `groupPolicy`. Strips the bot's `<at>` mention,
 * downloads attachments into the media folder (the Connector's own attachment URLs with the
 * bot's token, Teams file download links without it).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { MediaItem } from "../../bus/types.js";
import type { GateInput } from "../access/inbound-gate.js";

/** Attachments over this size are not downloaded. */
export const MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;

/** The part of a Bot Framework activity nanobot reads. */
export interface TeamsActivity {
  type?: string;
  id?: string;
  serviceUrl?: string;
  channelId?: string;
  text?: string;
  replyToId?: string;
  from?: { id?: string; name?: string; aadObjectId?: string };
  recipient?: { id?: string; name?: string };
  conversation?: { id?: string; conversationType?: string; isGroup?: boolean; tenantId?: string };
  entities?: Array<{ type?: string; text?: string; mentioned?: { id?: string; name?: string } }>;
  attachments?: Array<{ contentType?: string; contentUrl?: string; name?: string; content?: unknown }>;
  channelData?: { tenant?: { id?: string } };
}

export interface TeamsInboundOptions {
  channel: string;
  groupPolicy: "mention" | "open";
  mentionOnlyResponse: string;
  mediaDir: string;
  /** Whether `id` is an activity this bot sent (a reply to it addresses the bot). */
  isOwnMessage: (id: string) => boolean;
  /** Fetches an attachment URL; `connector` = a Bot Connector URL that wants the bot's token. */
  download: (url: string, connector: boolean) => Promise<Response>;
  onDownloadError?: (error: unknown) => void;
}

export function isPersonal(activity: TeamsActivity): boolean {
  const type = activity.conversation?.conversationType;
  return type ? type === "personal" : activity.conversation?.isGroup !== true;
}

/** Undefined when the activity is not a user's message for the bot. */
export async function toGateInput(activity: TeamsActivity, options: TeamsInboundOptions): Promise<GateInput | undefined> {
  if (activity.type !== "message") return undefined;
  const botId = activity.recipient?.id ?? "";
  const chatId = activity.conversation?.id ?? "";
  const senderId = activity.from?.aadObjectId ?? activity.from?.id ?? "";
  if (!chatId || !senderId || !activity.id || (botId && activity.from?.id === botId)) return undefined;
  const isDirect = isPersonal(activity);
  const mentioned = (activity.entities ?? []).some((e) => e.type === "mention" && e.mentioned?.id === botId);
  if (!isDirect && options.groupPolicy === "mention" && !mentioned && !repliesToBot(activity, options)) return undefined;
  let content = cleanText(activity.text ?? "", activity, botId);
  const media = await downloadAll(activity, options);
  if (!content && media.length === 0) {
    // Only the @mention: the Python nanobot hands the agent a stock greeting instead.
    content = options.mentionOnlyResponse.trim();
    if (!content) return undefined;
  }
  const metadata: Record<string, unknown> = { messageId: activity.id, conversationType: activity.conversation?.conversationType ?? (isDirect ? "personal" : "groupChat") };
  const tenant = activity.channelData?.tenant?.id ?? activity.conversation?.tenantId;
  if (tenant) metadata.tenantId = tenant;
  if (activity.replyToId) metadata.replyToMessageId = activity.replyToId;
  if (activity.from?.name) metadata.senderName = activity.from.name;
  const input: GateInput = {
    id: `${chatId}:${activity.id}`,
    chatId,
    sender: { id: senderId, ...(activity.from?.name ? { username: activity.from.name } : {}) },
    content,
    isDirect,
    metadata,
  };
  if (media.length) input.media = media;
  return input;
}

function repliesToBot(activity: TeamsActivity, options: TeamsInboundOptions): boolean {
  if (activity.replyToId && options.isOwnMessage(activity.replyToId)) return true;
  // A channel thread's conversation id names its root post: `19:…@thread.tacv2;messageid=…`.
  const root = /;messageid=([^;]+)/.exec(activity.conversation?.id ?? "")?.[1];
  return root !== undefined && options.isOwnMessage(root);
}

const ENTITIES: Record<string, string> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&apos;": "'", "&nbsp;": " " };

/** Drops the bot's `<at>` mention, keeps other people's names, unescapes HTML entities. */
function cleanText(text: string, activity: TeamsActivity, botId: string): string {
  let out = text;
  for (const entity of activity.entities ?? []) {
    if (entity.type === "mention" && entity.mentioned?.id === botId && entity.text) out = out.split(entity.text).join("");
  }
  out = out.replace(/<at[^>]*>(.*?)<\/at>/g, "$1");
  out = out.replace(/&(amp|lt|gt|quot|#39|apos|nbsp);/g, (m) => ENTITIES[m] ?? m).replace(/\u00a0/g, " ");
  return out.replace(/[ \t]{2,}/g, " ").trim();
}

function mediaKind(contentType: string): MediaItem["kind"] {
  if (contentType.startsWith("image/")) return "image";
  if (contentType.startsWith("audio/")) return "audio";
  if (contentType.startsWith("video/")) return "video";
  return "document";
}

interface Download {
  url: string;
  name: string;
  contentType?: string;
  /** Served by the Bot Connector (needs the bot's token); else a pre-authenticated link. */
  connector: boolean;
}

/** Files Teams attaches; the `text/html` copy of the message and cards are not files. */
function downloads(activity: TeamsActivity): Download[] {
  const out: Download[] = [];
  for (const [i, a] of (activity.attachments ?? []).entries()) {
    const type = a.contentType ?? "";
    if (type === "application/vnd.microsoft.teams.file.download.info") {
      const content = (a.content ?? {}) as { downloadUrl?: unknown };
      if (typeof content.downloadUrl === "string") out.push({ url: content.downloadUrl, name: a.name ?? `file-${i}`, connector: false });
      continue;
    }
    if (!a.contentUrl || type === "text/html" || type.startsWith("application/vnd.microsoft.")) continue;
    out.push({ url: a.contentUrl, name: a.name ?? `attachment-${i}`, connector: true, ...(type ? { contentType: type } : {}) });
  }
  return out;
}

async function downloadAll(activity: TeamsActivity, options: TeamsInboundOptions): Promise<MediaItem[]> {
  const out: MediaItem[] = [];
  for (const [i, d] of downloads(activity).entries()) {
    try {
      const response = await options.download(d.url, d.connector);
      if (!response.ok) throw new Error(`attachment download failed: HTTP ${response.status}`);
      if (Number(response.headers.get("content-length") ?? 0) > MAX_ATTACHMENT_BYTES) throw new Error(`attachment ${d.name} is over ${MAX_ATTACHMENT_BYTES} bytes`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      if (bytes.byteLength > MAX_ATTACHMENT_BYTES) throw new Error(`attachment ${d.name} is over ${MAX_ATTACHMENT_BYTES} bytes`);
      const contentType = d.contentType ?? response.headers.get("content-type")?.split(";")[0] ?? "application/octet-stream";
      await mkdir(options.mediaDir, { recursive: true });
      const safe = d.name.replace(/[^\w.-]/g, "_");
      const path = join(options.mediaDir, `${(activity.id ?? "msg").replace(/[^\w-]/g, "_")}_${i}_${safe}`);
      await writeFile(path, bytes);
      out.push({ kind: mediaKind(contentType), path, name: d.name, mimeType: contentType });
    } catch (error) {
      options.onDownloadError?.(error);
    }
  }
  return out;
}
