/**
 * `channels.email`, in the Python nanobot's key names (snake_case in its config.json, camelCase
 * after normalisation): IMAP to read, SMTP to send, and the address replies come from.
 */
import { z } from "zod";
import { bool, idString, port, positiveInt, str } from "../../config/schema-primitives.js";
import { parseChannelConfig } from "../channel-config.js";

export const emailConfigSchema = z.looseObject({
  enabled: bool().default(false),
  /** Sender addresses allowed to talk to the agent; email has no pairing (no replies to strangers). */
  allowFrom: z.array(idString(), { error: "expected a list of addresses" }).default([]),
  imapHost: str().optional(),
  imapPort: port().default(993),
  imapUsername: str().optional(),
  imapPassword: str().optional(),
  imapMailbox: str().default("INBOX"),
  imapUseSsl: bool().default(true),
  /**
   * STARTTLS on a plain IMAP connection: true requires it, false never tries it, unset upgrades
   * when the server offers it.
   */
  imapStartTls: bool().optional(),
  smtpHost: str().optional(),
  smtpPort: port().default(587),
  smtpUsername: str().optional(),
  smtpPassword: str().optional(),
  /** STARTTLS required on the plain SMTP connection (port 587); false sends without TLS. */
  smtpUseTls: bool().default(true),
  /** Implicit TLS from the first byte (port 465); takes precedence over `smtpUseTls`. */
  smtpUseSsl: bool().default(false),
  fromAddress: str().regex(/^[^@\s]+@[^@\s]+$/, { error: "expected an email address" }),
  pollIntervalSeconds: positiveInt().default(30),
  markSeen: bool().default(true),
  /** Longer bodies are cut before they reach the agent. */
  maxBodyChars: positiveInt().default(12_000),
  subjectPrefix: str().default("Re: "),
  /** Budget for each network step (connect, greeting, one IMAP command, one SMTP send). */
  timeoutSeconds: positiveInt().default(30),
  /** Attachments larger than this are not saved (the mail still gets through). */
  maxAttachmentBytes: positiveInt().default(20 * 1024 * 1024),
});

export type EmailConfig = z.output<typeof emailConfigSchema>;

export function parseEmailConfig(raw: unknown, name = "email"): EmailConfig {
  return parseChannelConfig(name, emailConfigSchema, raw);
}
