/**
 * Discord REST sends through discord.js's REST client, and how the delivery queue judges their
 * failures. The REST client is built with `retries: 0` and `rejectOnRateLimit`, so every retry
 * (5xx, network, 429) is the delivery queue's, counted against `sendMaxRetries`.
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { REST } from "discord.js";
import type { MediaItem } from "../../bus/types.js";
import type { RetryDecision } from "../delivery/delivery-queue.js";

/** Discord's limit on a message's content. */
export const DISCORD_TEXT_LIMIT = 2000;

export function classifyDiscordError(error: unknown): RetryDecision {
  if (typeof error !== "object" || error === null) return { retryable: false };
  const e = error as { status?: unknown; retryAfter?: unknown; name?: unknown };
  // RateLimitError (rejectOnRateLimit): Discord said how long to wait.
  if (typeof e.retryAfter === "number") return { retryable: true, retryAfterMs: e.retryAfter };
  // HTTPError (5xx) and DiscordAPIError (4xx) carry the status.
  if (typeof e.status === "number") return { retryable: e.status >= 500 || e.status === 429 };
  // Anything else is the network (connection refused, reset, timed out).
  return { retryable: true };
}

interface ApiMessage {
  id: string;
}

export interface TextOptions {
  /** Thread the message to this message id (a reply). */
  replyTo?: string;
}

/** Mentions the bot writes ping users, never @everyone or roles; a reply does not ping the asker. */
const ALLOWED_MENTIONS = { parse: ["users"], replied_user: false };

export async function postText(rest: REST, channelId: string, content: string, options: TextOptions = {}): Promise<string> {
  const body: Record<string, unknown> = { content, allowed_mentions: ALLOWED_MENTIONS };
  if (options.replyTo) body.message_reference = { message_id: options.replyTo, fail_if_not_exists: false };
  const sent = (await rest.post(`/channels/${channelId}/messages`, { body })) as ApiMessage;
  return sent.id;
}

export async function editText(rest: REST, channelId: string, messageId: string, content: string): Promise<void> {
  await rest.patch(`/channels/${channelId}/messages/${messageId}`, { body: { content, allowed_mentions: ALLOWED_MENTIONS } });
}

export interface LoadedFile {
  name: string;
  data: Buffer;
  contentType?: string;
}

/** Reads a reply's file; undefined when it has no local path or cannot be read. */
export async function loadFile(item: MediaItem): Promise<LoadedFile | undefined> {
  if (!item.path) return undefined;
  try {
    const data = await readFile(item.path);
    return { name: item.name ?? basename(item.path), data, ...(item.mimeType ? { contentType: item.mimeType } : {}) };
  } catch {
    return undefined;
  }
}

export async function postFile(rest: REST, channelId: string, file: LoadedFile, options: TextOptions = {}): Promise<string> {
  const { name } = file;
  const body: Record<string, unknown> = { attachments: [{ id: 0, filename: name }], allowed_mentions: ALLOWED_MENTIONS };
  if (options.replyTo) body.message_reference = { message_id: options.replyTo, fail_if_not_exists: false };
  const sent = (await rest.post(`/channels/${channelId}/messages`, { body, files: [file] })) as ApiMessage;
  return sent.id;
}

export async function sendTyping(rest: REST, channelId: string): Promise<void> {
  await rest.post(`/channels/${channelId}/typing`);
}

export async function react(rest: REST, channelId: string, messageId: string, emoji: string, add: boolean): Promise<void> {
  const route = `/channels/${channelId}/messages/${messageId}/reactions/${encodeURIComponent(emoji)}/@me` as const;
  if (add) await rest.put(route);
  else await rest.delete(route);
}
