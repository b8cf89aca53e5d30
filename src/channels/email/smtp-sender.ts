/**
 * The SMTP side of the email transport: one nodemailer transporter (a connection per send, no
 * pool: a bot's replies are sparse and a pooled idle socket is one more thing to go stale).
 * TLS follows the Python nanobot's switches: `smtpUseSsl` is implicit TLS, else `smtpUseTls`
 * requires STARTTLS, else the mail goes in cleartext. Failures keep nodemailer's
 * `responseCode` (4xx → retried by the delivery queue, 5xx → reported) and `code`.
 */
import type { Transporter } from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport/index.js";
import type { EmailConfig } from "./config.js";
import { MailTransportError, withDeadline } from "./mail-errors.js";
import type { OutgoingMail } from "./transport.js";

export interface SmtpSenderOptions {
  config: EmailConfig;
  /** Budget for connect, greeting and each quiet stretch of the dialogue. */
  timeoutMs?: number;
}

export class SmtpSender {
  private readonly config: EmailConfig;
  private readonly timeoutMs: number;
  private transporter: Promise<Transporter<SMTPTransport.SentMessageInfo>> | undefined;

  constructor(options: SmtpSenderOptions) {
    this.config = options.config;
    this.timeoutMs = options.timeoutMs ?? options.config.timeoutSeconds * 1000;
  }

  async send(mail: OutgoingMail): Promise<void> {
    const transporter = await (this.transporter ??= this.createTransporter());
    // nodemailer's own per-step timeouts bound each phase; this caps the whole dialogue.
    const info = await withDeadline(
      transporter.sendMail({
        from: mail.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        messageId: mail.messageId,
        ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo } : {}),
        ...(mail.references?.length ? { references: mail.references } : {}),
        ...(mail.attachments?.length ? { attachments: mail.attachments.map((a) => ({ path: a.path, ...(a.filename ? { filename: a.filename } : {}) })) } : {}),
      }),
      this.timeoutMs * 4,
      "SMTP send",
    );
    if (info.rejected.length > 0 && info.accepted.length === 0) {
      throw new MailTransportError(`SMTP server rejected the recipient: ${info.response}`, { retryable: false, code: "EENVELOPE" });
    }
  }

  close(): void {
    const pending = this.transporter;
    this.transporter = undefined;
    pending?.then((t) => t.close()).catch(() => undefined);
  }

  private async createTransporter(): Promise<Transporter<SMTPTransport.SentMessageInfo>> {
    const { createTransport } = await import("nodemailer");
    const c = this.config;
    const options: SMTPTransport.Options = {
      host: c.smtpHost,
      port: c.smtpPort,
      secure: c.smtpUseSsl,
      connectionTimeout: this.timeoutMs,
      greetingTimeout: this.timeoutMs,
      socketTimeout: this.timeoutMs,
      dnsTimeout: this.timeoutMs,
      logger: false,
      debug: false,
    };
    if (!c.smtpUseSsl) {
      if (c.smtpUseTls) options.requireTLS = true;
      else options.ignoreTLS = true;
    }
    if (c.smtpUsername) options.auth = { user: c.smtpUsername, pass: c.smtpPassword ?? "" };
    return createTransport(options);
  }
}
