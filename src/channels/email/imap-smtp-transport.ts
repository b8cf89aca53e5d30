/**
 * The real `MailTransport`: IMAP (imapflow) to read, SMTP (nodemailer) to send, mailparser in
 * between. State lives under the nanobot home: the IMAP high-water mark in
 * `<home>/channels/<name>/imap-state.json`, attachments in `<home>/media/<name>/`.
 * Credentials go to the protocol libraries only; nothing here logs them.
 */
import { join } from "node:path";
import { ConfigError } from "../../core/errors.js";
import { silentLogger } from "../../core/logger.js";
import type { Logger } from "../../core/logger.js";
import type { EmailConfig } from "./config.js";
import { ImapMailbox } from "./imap-mailbox.js";
import type { ReconnectBackoff } from "./imap-mailbox.js";
import { imapStatePath } from "./imap-state.js";
import { SmtpSender } from "./smtp-sender.js";
import type { IncomingMail, MailTransport, OutgoingMail } from "./transport.js";

export interface ImapSmtpTransportOptions {
  config: EmailConfig;
  /** The channel name (`channels.<name>`): names the state file and the media folder. */
  name: string;
  /** `$NANOBOT_HOME`. */
  home: string;
  logger?: Logger;
  /** Clock for the reconnect backoff (tests inject one). */
  now?: () => number;
  /** Per-step network deadline. Default `config.timeoutSeconds`. */
  timeoutMs?: number;
  backoff?: ReconnectBackoff;
}

export class ImapSmtpTransport implements MailTransport {
  private readonly imap: ImapMailbox;
  private readonly smtp: SmtpSender;

  constructor(options: ImapSmtpTransportOptions) {
    const { config, name, home } = options;
    assertComplete(config, name);
    const logger = options.logger ?? silentLogger;
    this.imap = new ImapMailbox({
      config,
      statePath: imapStatePath(home, name),
      mediaDir: join(home, "media", name),
      logger,
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      ...(options.backoff ? { backoff: options.backoff } : {}),
      ...(options.now ? { now: options.now } : {}),
    });
    this.smtp = new SmtpSender({ config, ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}) });
  }

  fetchUnseen(signal?: AbortSignal): Promise<IncomingMail[]> {
    return this.imap.fetchUnseen(signal);
  }

  markSeen(uid: string): Promise<void> {
    return this.imap.markSeen(uid);
  }

  markHandled(uid: string): Promise<void> {
    return this.imap.markHandled(uid);
  }

  send(mail: OutgoingMail): Promise<void> {
    return this.smtp.send(mail);
  }

  async close(): Promise<void> {
    this.smtp.close();
    await this.imap.close();
  }
}

/** The settings without which the transport cannot work, checked before anything connects. */
export function missingMailSettings(config: EmailConfig): string[] {
  const missing: string[] = [];
  if (!config.imapHost) missing.push("imapHost");
  if (!config.imapUsername) missing.push("imapUsername");
  if (config.imapPassword === undefined) missing.push("imapPassword");
  if (!config.smtpHost) missing.push("smtpHost");
  return missing;
}

function assertComplete(config: EmailConfig, name: string): void {
  const missing = missingMailSettings(config);
  if (missing.length) {
    throw new ConfigError(`channels.${name}: the IMAP/SMTP transport (imapflow, nodemailer and mailparser) needs ${missing.join(", ")}`, { path: `channels.${name}` });
  }
}
