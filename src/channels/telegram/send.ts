/**
 * Telegram sends: HTML first, plain text when Telegram rejects the markup, and the retry
 * classification the delivery queue uses (429 `retry_after`, 5xx and network errors retry).
 */
import { GrammyError, HttpError } from "grammy";
import type { Api } from "grammy";
import type { RetryDecision } from "../delivery/delivery-queue.js";

/** Telegram's limit on a message text (and on an edited text). */
export const TELEGRAM_TEXT_LIMIT = 4096;

export function classifyTelegramError(error: unknown): RetryDecision {
  if (error instanceof GrammyError) {
    if (error.error_code === 429) {
      const seconds = error.parameters.retry_after;
      return seconds !== undefined ? { retryable: true, retryAfterMs: seconds * 1000 } : { retryable: true };
    }
    return { retryable: error.error_code >= 500 };
  }
  return { retryable: error instanceof HttpError };
}

function isParseError(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /parse entities|can't find end|unsupported start tag|unexpected end tag/i.test(error.description);
}

export function isNotModified(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /message is not modified/i.test(error.description);
}

/** Numeric chat ids go out as numbers; `@channel` names stay strings. */
export function chatIdFor(chatId: string): number | string {
  return /^-?\d+$/.test(chatId) ? Number(chatId) : chatId;
}

export interface SendExtras {
  replyTo?: number;
  messageThreadId?: number;
}

export interface FormattedChunk {
  source: string;
  rendered: string;
}

/** The Bot API fields that place a message: answering `replyTo`, in topic `messageThreadId`. */
export function placementOptions(extras: SendExtras): { reply_parameters?: { message_id: number; allow_sending_without_reply: boolean }; message_thread_id?: number } {
  return {
    ...(extras.replyTo !== undefined ? { reply_parameters: { message_id: extras.replyTo, allow_sending_without_reply: true } } : {}),
    ...(extras.messageThreadId !== undefined ? { message_thread_id: extras.messageThreadId } : {}),
  };
}

export async function sendFormatted(api: Api, chatId: string, chunk: FormattedChunk, extras: SendExtras = {}): Promise<number> {
  const other = placementOptions(extras);
  try {
    const sent = await api.sendMessage(chatIdFor(chatId), chunk.rendered, { ...other, parse_mode: "HTML" });
    return sent.message_id;
  } catch (error) {
    if (!isParseError(error)) throw error;
    const sent = await api.sendMessage(chatIdFor(chatId), chunk.source, other);
    return sent.message_id;
  }
}

export async function editFormatted(api: Api, chatId: string, messageId: number, chunk: FormattedChunk): Promise<void> {
  try {
    try {
      await api.editMessageText(chatIdFor(chatId), messageId, chunk.rendered, { parse_mode: "HTML" });
    } catch (error) {
      if (!isParseError(error)) throw error;
      await api.editMessageText(chatIdFor(chatId), messageId, chunk.source);
    }
  } catch (error) {
    // The preview already shows exactly this text: nothing left to do.
    if (!isNotModified(error)) throw error;
  }
}
