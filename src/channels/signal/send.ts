/**
 * What the channel sends through signal-cli: text (with a quote for a threaded reply), files as
 * data URIs (so a daemon on another machine needs no shared folder), typing indicators.
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { MediaItem } from "../../bus/types.js";
import { isGroupId } from "./ids.js";
import type { SignalRpc } from "./rpc.js";

/**
 * signal-cli's practical limit (as the Python nanobot). Bodies over Signal's 2000 characters
 * go out as a long-text attachment, which signal-cli does by itself.
 */
export const SIGNAL_TEXT_LIMIT = 64_000;

export function recipient(chatId: string): Record<string, unknown> {
  return isGroupId(chatId) ? { groupId: chatId } : { recipient: [chatId] };
}

export interface SendOptions {
  /** signal-cli `textStyle` ranges (`start:length:STYLE`). */
  styles?: string[];
  quote?: { timestamp: number; author: string };
  attachments?: string[];
}

/** Sends one message; resolves to its timestamp (Signal's message id). */
export async function sendText(rpc: SignalRpc, chatId: string, message: string, options: SendOptions = {}): Promise<number> {
  const params: Record<string, unknown> = { ...recipient(chatId), message };
  if (options.styles?.length) params.textStyle = options.styles;
  if (options.quote) {
    params.quoteTimestamp = options.quote.timestamp;
    params.quoteAuthor = options.quote.author;
  }
  if (options.attachments?.length) params.attachments = options.attachments;
  const result = await rpc.call<{ timestamp?: unknown }>("send", params);
  return typeof result?.timestamp === "number" ? result.timestamp : 0;
}

export async function sendTyping(rpc: SignalRpc, chatId: string): Promise<void> {
  await rpc.call("sendTyping", recipient(chatId));
}

/** A reply's file as a signal-cli data URI; undefined when it has no local path or cannot be read. */
export async function attachmentUri(item: MediaItem): Promise<string | undefined> {
  if (!item.path) return undefined;
  try {
    const data = await readFile(item.path);
    const name = (item.name ?? basename(item.path)).replace(/[;,]/g, "_");
    return `data:${item.mimeType ?? "application/octet-stream"};filename=${name};base64,${data.toString("base64")}`;
  } catch {
    return undefined;
  }
}
