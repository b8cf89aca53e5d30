/**
 * Slack events → gate input. Decides whether a message is for the bot (direct message policy;
 * in channels `groupPolicy`: a mention, a reply in one of the bot's threads, or every message),
 * strips the bot's mention, downloads `url_private` files with the bot token, and picks the
 * thread the answer belongs in (Slack's `thread_ts`: the root message of the thread).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { MediaItem } from "../../bus/types.js";
import type { GateInput } from "../access/inbound-gate.js";
import type { SlackConfig } from "./config.js";

/** Files over this size are not downloaded (as the Discord channel). */
export const MAX_FILE_BYTES = 20 * 1024 * 1024;

/** The fields of a Slack `message` / `app_mention` event the channel reads. */
export interface SlackMessageEvent {
  type: string;
  subtype?: string;
  channel: string;
  channel_type?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  ts: string;
  thread_ts?: string;
  parent_user_id?: string;
  files?: SlackFile[];
}

export interface SlackFile {
  id?: string;
  name?: string;
  title?: string;
  mimetype?: string;
  size?: number;
  url_private?: string;
  url_private_download?: string;
}

export interface SlackInboundOptions {
  channel: string;
  config: SlackConfig;
  botId: string;
  mediaDir: string;
  /** Whether `ts` is a message this bot sent in `chat` (a reply in its thread addresses it). */
  isOwnMessage: (chat: string, ts: string) => boolean;
  onDownloadError?: (file: string, error: unknown) => void;
}

/** A message for the bot: the gate input and where the answer goes. */
export interface SlackInbound {
  input: GateInput;
  ts: string;
  /** The thread the answer is posted in; undefined = the chat itself. */
  threadTs?: string;
  /** The message arrived inside an existing thread (not one the reply opens). */
  inThread: boolean;
}

export function narrowEvent(raw: Record<string, unknown>): SlackMessageEvent | undefined {
  if ((raw.type !== "message" && raw.type !== "app_mention") || typeof raw.channel !== "string" || typeof raw.ts !== "string") return undefined;
  return raw as unknown as SlackMessageEvent;
}

function isDirectChat(event: SlackMessageEvent): boolean {
  return event.channel_type ? event.channel_type === "im" : event.channel.startsWith("D");
}

/** Undefined when the event is not a message for the bot. */
export async function toSlackInbound(event: SlackMessageEvent, options: SlackInboundOptions): Promise<SlackInbound | undefined> {
  const { config, botId } = options;
  // file_share is a user message with files; other subtypes are edits, joins, bot posts.
  if (event.subtype && event.subtype !== "file_share") return undefined;
  const user = event.user;
  if (!user || user === botId) return undefined;
  const isDirect = isDirectChat(event);
  const text = event.text ?? "";
  if (isDirect) {
    if (!config.dm.enabled) return undefined;
  } else if (!addressed(event, text, options)) {
    return undefined;
  }
  const files = await downloadAll(event.files ?? [], options);
  const content = [stripMention(text, botId), ...files.markers].filter(Boolean).join("\n");
  if (!content && files.media.length === 0) return undefined;
  const inThread = event.thread_ts !== undefined && event.thread_ts !== event.ts;
  const opensThread = isDirect ? config.dm.replyInThread : config.replyInThread;
  const threadTs = inThread ? event.thread_ts : opensThread ? event.ts : undefined;
  const metadata: Record<string, unknown> = {
    // A string: the agent layer threads its reply to it.
    messageId: event.ts,
    slack: { ts: event.ts, channelType: event.channel_type ?? (isDirect ? "im" : "channel"), ...(threadTs ? { threadTs } : {}) },
  };
  const input: GateInput = {
    // `message` and `app_mention` of one message share its ts: the gate drops the second.
    id: `${event.channel}:${event.ts}`,
    chatId: event.channel,
    sender: { id: user },
    content,
    isDirect,
    metadata,
  };
  if (files.media.length) input.media = files.media;
  // A thread is its own conversation (the Python nanobot's session key).
  if (threadTs) input.sessionKey = `${options.channel}:${event.channel}:${threadTs}`;
  return { input, ts: event.ts, inThread, ...(threadTs ? { threadTs } : {}) };
}

function mentions(event: SlackMessageEvent, text: string, botId: string): boolean {
  return event.type === "app_mention" || (botId !== "" && text.includes(`<@${botId}>`));
}

function addressed(event: SlackMessageEvent, text: string, options: SlackInboundOptions): boolean {
  const { config, botId } = options;
  const mentioned = mentions(event, text, botId);
  const inBotThread =
    event.thread_ts !== undefined && event.thread_ts !== event.ts && (event.parent_user_id === botId || options.isOwnMessage(event.channel, event.thread_ts));
  switch (config.groupPolicy) {
    case "open":
      return true;
    case "mention":
      return mentioned || inBotThread;
    case "allowlist":
      if (!config.groupAllowFrom.includes(event.channel)) return false;
      return config.groupRequireMention ? mentioned || inBotThread : true;
  }
}

/** Removes `<@BOT>` so a mention followed by `/new` reads `/new`. */
function stripMention(text: string, botId: string): string {
  if (!botId) return text.trim();
  return text
    .replace(new RegExp(`<@${botId}(?:\\|[^>]*)?>`, "g"), "")
    .replace(/[ \t]{2,}/g, " ")
    .trim();
}

function mediaKind(mime: string | undefined): MediaItem["kind"] {
  if (mime?.startsWith("image/")) return "image";
  if (mime?.startsWith("audio/")) return "audio";
  if (mime?.startsWith("video/")) return "video";
  return "document";
}

/** Downloads each file; one that cannot be fetched becomes a note in the text (as the Python nanobot). */
async function downloadAll(files: SlackFile[], options: SlackInboundOptions): Promise<{ media: MediaItem[]; markers: string[] }> {
  const media: MediaItem[] = [];
  const markers: string[] = [];
  for (const file of files) {
    const name = file.name ?? file.title ?? file.id ?? "slack-file";
    const url = file.url_private_download ?? file.url_private;
    const label = file.mimetype?.startsWith("image/") ? "image" : "file";
    const fail = (reason: string): void => {
      markers.push(`[${label}: ${name}: ${reason}; not available to nanobot. Check the Slack app's files:read scope and that the bot can see the file.]`);
    };
    if (!url) {
      fail("missing download url");
      continue;
    }
    if ((file.size ?? 0) > MAX_FILE_BYTES) {
      fail(`larger than ${MAX_FILE_BYTES / 1024 / 1024} MB`);
      continue;
    }
    try {
      // url_private needs the bot token; without it Slack answers with its HTML login page.
      const response = await fetch(url, { headers: { authorization: `Bearer ${options.config.botToken}` } });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      if ((response.headers.get("content-type") ?? "").includes("text/html")) throw new Error("Slack returned an HTML page instead of the file (missing files:read scope?)");
      const bytes = new Uint8Array(await response.arrayBuffer());
      await mkdir(options.mediaDir, { recursive: true });
      const safe = name.replace(/[^\w.-]/g, "_");
      const path = join(options.mediaDir, `${(file.id ?? "file").replace(/[^\w-]/g, "_")}_${safe}`);
      await writeFile(path, bytes);
      media.push({ kind: mediaKind(file.mimetype), path, name, ...(file.mimetype ? { mimeType: file.mimetype } : {}) });
    } catch (error) {
      options.onDownloadError?.(name, error);
      fail("download failed");
    }
  }
  return { media, markers };
}
