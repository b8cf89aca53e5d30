/**
 * Email as a channel: polls the mailbox, forwards mails from allowed addresses, and answers in
 * the same thread (`In-Reply-To`/`References`, "Re:" subject). Email cannot stream or show
 * typing, so deltas are ignored and the reply goes out once, at `message` or `stream_end`.
 * Each outgoing Message-ID derives from the delivery id, so even a resend after an ambiguous
 * SMTP failure is recognisable as the same mail by the recipient's client.
 */
import { createHash } from "node:crypto";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { Channel, ChannelDeps } from "../types.js";
import type { EmailConfig } from "./config.js";
import { isRetryableMailError } from "./transport.js";
import type { IncomingMail, MailTransport, OutgoingMail } from "./transport.js";

export interface EmailChannelOptions extends ChannelDeps {
  config: EmailConfig;
  transport: MailTransport;
  name?: string;
}

/** What a reply to a correspondent needs to land in their latest thread. */
interface ThreadState {
  subject: string;
  lastMessageId: string;
  references: string[];
}

export class EmailChannel implements Channel {
  readonly name: string;
  private readonly config: EmailConfig;
  private readonly transport: MailTransport;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private readonly threads = new Map<string, ThreadState>();
  private cancelTimer: (() => void) | undefined;
  private polling: Promise<void> | undefined;
  private running = false;

  constructor(options: EmailChannelOptions) {
    this.name = options.name ?? "email";
    this.config = options.config;
    this.transport = options.transport;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
  }

  /** The first poll doubles as the connection check: it failing fails the start. */
  async start(signal: AbortSignal): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      await this.pollOnce(signal);
    } catch (error) {
      this.running = false;
      throw error;
    }
    this.scheduleNext();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    await this.polling?.catch(() => undefined);
    await this.transport.close();
  }

  async send(message: OutboundMessage): Promise<void> {
    if (message.kind !== "message" && message.kind !== "stream_end") return;
    const media = message.kind === "message" ? message.media : undefined;
    const mail = this.buildReply(message.chatId, message.id, message.content, media);
    const classify = (error: unknown) => ({ retryable: isRetryableMailError(error) });
    const outcome = await this.deps.delivery.deliver(`${this.name}:${message.id}`, () => this.transport.send(mail), classify);
    if (outcome.sent) this.rememberOwn(message.chatId, mail.messageId);
  }

  private scheduleNext(): void {
    if (!this.running) return;
    this.cancelTimer = this.deps.clock.setTimer(() => {
      this.cancelTimer = undefined;
      this.polling = this.pollOnce()
        .catch((error: unknown) => this.log.warn("email poll failed", { error: errorMessage(error) }))
        .finally(() => {
          this.polling = undefined;
          this.scheduleNext();
        });
    }, this.config.pollIntervalSeconds * 1000);
  }

  private async pollOnce(signal?: AbortSignal): Promise<void> {
    const mails = await this.transport.fetchUnseen(signal);
    for (const mail of mails) {
      await this.receive(mail);
      if (this.config.markSeen) await this.transport.markSeen(mail.uid);
      await this.transport.markHandled?.(mail.uid);
    }
  }

  private async receive(mail: IncomingMail): Promise<void> {
    const address = mail.from.address.trim().toLowerCase();
    // Never answer ourselves or machines (bounces, vacation notices): that is how mail loops start.
    if (address === this.config.fromAddress.toLowerCase() || mail.autoSubmitted) return;
    const body = stripQuotedReply(mail.text).slice(0, this.config.maxBodyChars);
    const threadRoot = mail.references[0] ?? mail.inReplyTo ?? mail.messageId;
    const outcome = await this.deps.gate.receive(
      {
        id: mail.messageId,
        chatId: address,
        sender: { id: address },
        content: mail.subject ? `Subject: ${mail.subject}\n\n${body}` : body,
        isDirect: true,
        ...(mail.attachments?.length ? { media: mail.attachments } : {}),
        metadata: { messageId: mail.messageId, subject: mail.subject, threadId: threadRoot, ...(mail.from.name ? { senderName: mail.from.name } : {}) },
      },
      // No pairing codes by email: a reply to an unknown address is backscatter.
      () => Promise.resolve(),
    );
    if (outcome === "forwarded") {
      this.threads.set(address, { subject: mail.subject, lastMessageId: mail.messageId, references: [...mail.references, mail.messageId] });
    }
  }

  private buildReply(chatId: string, deliveryId: string, content: string, media: MediaItem[] | undefined): OutgoingMail {
    const thread = this.threads.get(chatId);
    const mail: OutgoingMail = {
      from: this.config.fromAddress,
      to: chatId,
      subject: thread ? replySubject(thread.subject, this.config.subjectPrefix) : "Message from nanobot",
      text: content,
      messageId: deterministicMessageId(`${this.name}:${deliveryId}`, this.config.fromAddress),
    };
    if (thread) {
      mail.inReplyTo = thread.lastMessageId;
      mail.references = thread.references.slice(-20);
    }
    const files = (media ?? []).filter((m): m is MediaItem & { path: string } => typeof m.path === "string");
    if (files.length) mail.attachments = files.map((m) => (m.name ? { path: m.path, filename: m.name } : { path: m.path }));
    return mail;
  }

  private rememberOwn(chatId: string, messageId: string): void {
    const thread = this.threads.get(chatId);
    if (thread && !thread.references.includes(messageId)) thread.references.push(messageId);
  }
}

/** "Re: x" stays "Re: x"; anything else gets the prefix once. */
export function replySubject(subject: string, prefix: string): string {
  const base = subject.trim() || "(no subject)";
  return /^re\s*:/i.test(base) ? base : `${prefix}${base}`;
}

export function deterministicMessageId(key: string, fromAddress: string): string {
  const domain = fromAddress.split("@")[1] ?? "nanobot.local";
  return `<${createHash("sha256").update(key).digest("hex").slice(0, 32)}@${domain}>`;
}

/** Drops the quoted history mail clients append ("On … wrote:" and the `>` lines after it). */
export function stripQuotedReply(text: string): string {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  let end = lines.length;
  while (end > 0 && (lines[end - 1]!.startsWith(">") || lines[end - 1]!.trim() === "")) end--;
  if (end < lines.length && end > 0 && /^On .+wrote:\s*$/.test(lines[end - 1]!.trim())) end--;
  const kept = lines.slice(0, end).join("\n").trim();
  return kept || text.trim();
}
