/**
 * The Slack Web API calls the channel makes (through @slack/web-api's WebClient), and how a
 * failed call is judged for the delivery queue's retries.
 */
import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import type { WebClient } from "@slack/web-api";
import type { MediaItem } from "../../bus/types.js";
import type { RetryDecision } from "../delivery/delivery-queue.js";

/** Slack accepts ~40k characters, but long messages are truncated in the UI; 4000 keeps each readable. */
export const SLACK_TEXT_LIMIT = 4000;

/** Platform errors that a later attempt may not hit (everything else, e.g. channel_not_found, will). */
const RETRYABLE_PLATFORM_ERRORS: ReadonlySet<string> = new Set(["internal_error", "fatal_error", "service_unavailable", "request_timeout", "ratelimited"]);

interface SlackSdkError {
  code?: string;
  retryAfter?: number;
  statusCode?: number;
  data?: { error?: string };
}

export function classifySlackError(error: unknown): RetryDecision {
  const e = (error ?? {}) as SlackSdkError;
  switch (e.code) {
    case "slack_webapi_rate_limited_error":
      return { retryable: true, ...(typeof e.retryAfter === "number" ? { retryAfterMs: e.retryAfter * 1000 } : {}) };
    case "slack_webapi_http_error":
      return { retryable: typeof e.statusCode === "number" && e.statusCode >= 500 };
    case "slack_webapi_platform_error":
      return { retryable: RETRYABLE_PLATFORM_ERRORS.has(e.data?.error ?? "") };
    case "slack_webapi_request_error":
      // The network: connection refused, reset, timed out.
      return { retryable: true };
    default:
      return { retryable: false };
  }
}

export interface PostOptions {
  /** The thread's root message ts. */
  threadTs?: string;
}

export async function postText(web: WebClient, channel: string, text: string, options: PostOptions = {}): Promise<string> {
  const sent = await web.chat.postMessage({ channel, text, mrkdwn: true, ...(options.threadTs ? { thread_ts: options.threadTs } : {}) });
  if (!sent.ts) throw new Error(`chat.postMessage to ${channel} returned no ts`);
  return sent.ts;
}

export async function editText(web: WebClient, channel: string, ts: string, text: string): Promise<void> {
  await web.chat.update({ channel, ts, text });
}

export async function deleteMessage(web: WebClient, channel: string, ts: string): Promise<void> {
  await web.chat.delete({ channel, ts });
}

export interface LoadedFile {
  name: string;
  data: Buffer;
}

/** Reads a reply's file; undefined when it has no local path or cannot be read. */
export async function loadFile(item: MediaItem): Promise<LoadedFile | undefined> {
  if (!item.path) return undefined;
  try {
    return { name: item.name ?? basename(item.path), data: await readFile(item.path) };
  } catch {
    return undefined;
  }
}

/** files.getUploadURLExternal → upload → files.completeUploadExternal, as the SDK's filesUploadV2 does. */
export async function uploadFile(web: WebClient, channel: string, file: LoadedFile, options: PostOptions = {}): Promise<void> {
  const base = { file: file.data, filename: file.name, title: file.name };
  if (options.threadTs) await web.filesUploadV2({ ...base, channel_id: channel, thread_ts: options.threadTs });
  else await web.filesUploadV2({ ...base, channel_id: channel });
}

/** Adds or removes a reaction; best effort (callers swallow the error). */
export async function react(web: WebClient, channel: string, ts: string, name: string, add: boolean): Promise<void> {
  if (add) await web.reactions.add({ channel, timestamp: ts, name });
  else await web.reactions.remove({ channel, timestamp: ts, name });
}

export interface ThreadMessage {
  ts?: string;
  user?: string;
  bot_id?: string;
  text?: string;
  subtype?: string;
}

export async function threadMessages(web: WebClient, channel: string, ts: string, limit: number): Promise<ThreadMessage[]> {
  const result = await web.conversations.replies({ channel, ts, limit });
  return (result.messages ?? []) as ThreadMessage[];
}
