/**
 * The seam between the email channel and the mail protocols. An IMAP+SMTP implementation
 * (imapflow + nodemailer + mailparser) plugs in here; the channel itself only sees parsed mails.
 */
import type { MediaItem } from "../../bus/types.js";

export interface MailAddress {
  address: string;
  name?: string;
}

/** A received mail, already parsed (headers decoded, text body extracted). */
export interface IncomingMail {
  /** IMAP UID (for marking seen). */
  uid: string;
  /** The `Message-ID` header, with angle brackets. */
  messageId: string;
  from: MailAddress;
  subject: string;
  text: string;
  inReplyTo?: string;
  /** The `References` header, oldest first. */
  references: string[];
  /** Epoch ms from the Date header. */
  date?: number;
  /** Attachments saved to disk by the transport. */
  attachments?: MediaItem[];
  /** Auto-generated mail (bounces, vacation replies): never answered. */
  autoSubmitted?: boolean;
}

export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  /** Set by the channel, derived from the delivery id, so a resend is recognisable. */
  messageId: string;
  inReplyTo?: string;
  references?: string[];
  attachments?: Array<{ path: string; filename?: string }>;
}

export interface MailTransport {
  /** Unseen mails in the watched mailbox, oldest first. */
  fetchUnseen(signal?: AbortSignal): Promise<IncomingMail[]>;
  markSeen(uid: string): Promise<void>;
  /**
   * The channel is done with this mail (forwarded, dropped or ignored): it must never come back,
   * even after a restart or with `markSeen` off. Called in UID order, after `markSeen`.
   */
  markHandled?(uid: string): Promise<void>;
  send(mail: OutgoingMail): Promise<void>;
  close(): Promise<void>;
}

/** Transport failures worth retrying (connection trouble, 4xx SMTP replies) set this flag. */
export interface RetryableMailError extends Error {
  retryable: true;
}

export function isRetryableMailError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const e = error as { retryable?: unknown; code?: unknown; responseCode?: unknown };
  if (e.retryable === true) return true;
  if (typeof e.responseCode === "number") return e.responseCode >= 400 && e.responseCode < 500;
  return typeof e.code === "string" && ["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ESOCKET", "ECONNECTION"].includes(e.code);
}
