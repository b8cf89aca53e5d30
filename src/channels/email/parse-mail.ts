/**
 * Raw RFC 5322 source → `IncomingMail`. mailparser does the MIME work (charsets, encoded words,
 * multipart); this file picks what the channel needs, recognises machine-sent mail, and saves
 * attachments under the channel's media folder so the agent can open them as files.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Attachment, HeaderValue, ParsedMail } from "mailparser";
import type { MediaItem } from "../../bus/types.js";
import type { IncomingMail } from "./transport.js";

export interface ParseMailOptions {
  /** IMAP UID, carried through so the channel can mark the mail seen. */
  uid: string;
  /** Used for a stand-in Message-ID when the mail has none, and in attachment file names. */
  uidValidity: string;
  /** Where attachments are written (`<home>/media/<channel>`). */
  mediaDir: string;
  maxAttachmentBytes: number;
  /** Told about attachments that were not saved (too large, write failure). */
  onSkipped?: (name: string, reason: string) => void;
}

type SimpleParser = (source: Buffer) => Promise<ParsedMail>;

let parserPromise: Promise<SimpleParser> | undefined;

/** mailparser is loaded on first use: gateways without an email channel never pay for it. */
function loadParser(): Promise<SimpleParser> {
  parserPromise ??= import("mailparser").then((m) => (source: Buffer) => m.simpleParser(source, { skipTextToHtml: true }));
  return parserPromise;
}

export async function parseMail(source: Buffer, options: ParseMailOptions): Promise<IncomingMail> {
  const parsed = await (await loadParser())(source);
  const sender = parsed.from?.value.find((a) => a.address) ?? parsed.from?.value[0];
  const messageId = firstMessageId(parsed.messageId) ?? `<${options.uidValidity}.${options.uid}@imap.invalid>`;
  const mail: IncomingMail = {
    uid: options.uid,
    messageId,
    from: { address: sender?.address ?? "", ...(sender?.name ? { name: sender.name } : {}) },
    subject: (parsed.subject ?? "").trim(),
    text: bodyText(parsed),
    references: messageIds(parsed.references),
  };
  const inReplyTo = firstMessageId(parsed.inReplyTo);
  if (inReplyTo) mail.inReplyTo = inReplyTo;
  const date = parsed.date?.getTime();
  if (date !== undefined && Number.isFinite(date)) mail.date = date;
  if (isAutoSubmitted(parsed, mail.from.address)) mail.autoSubmitted = true;
  const attachments = await saveAttachments(parsed.attachments, options);
  if (attachments.length) mail.attachments = attachments;
  return mail;
}

/** text/plain when the mail has it; otherwise mailparser's rendering of the HTML part. */
function bodyText(parsed: ParsedMail): string {
  const text = parsed.text?.trim();
  if (text) return text;
  return parsed.html ? htmlToPlainText(parsed.html) : "";
}

/** A last resort for HTML mailparser did not render: tags out, entities and breaks kept sane. */
export function htmlToPlainText(html: string): string {
  return html
    .replace(/<(script|style|head)[\s\S]*?<\/\1>/gi, "")
    .replace(/<br\s*\/?>/gi, "\n")
    .replace(/<\/(p|div|li|tr|h[1-6])>/gi, "\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&nbsp;/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/[ \t]+\n/g, "\n")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
}

function messageIds(value: string | string[] | undefined): string[] {
  const all = Array.isArray(value) ? value : value ? [value] : [];
  return all.flatMap((v) => v.match(/<[^<>\s]+>/g) ?? []);
}

function firstMessageId(value: string | undefined): string | undefined {
  return messageIds(value)[0];
}

/** RFC 3834 `Auto-Submitted`, the older `Precedence`/`X-Autoreply` conventions, and bounces. */
function isAutoSubmitted(parsed: ParsedMail, from: string): boolean {
  const header = (key: string): string => headerText(parsed.headers.get(key)).trim().toLowerCase();
  const autoSubmitted = header("auto-submitted");
  if (autoSubmitted && autoSubmitted !== "no") return true;
  if (["bulk", "junk", "auto_reply"].includes(header("precedence"))) return true;
  if (parsed.headers.has("x-autoreply") || parsed.headers.has("x-autorespond")) return true;
  const local = from.split("@")[0]?.toLowerCase() ?? "";
  return local === "mailer-daemon" || local === "postmaster";
}

function headerText(value: HeaderValue | undefined): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map((v) => (typeof v === "string" ? v : v.value)).join(", ");
  if (value && typeof value === "object" && "value" in value && typeof value.value === "string") return value.value;
  return "";
}

/**
 * Writes each real attachment (inline images referenced by the HTML body are decoration, not
 * content) as `<uidValidity>-<uid>-<n>-<name>`, so a re-fetched mail overwrites its own files.
 */
async function saveAttachments(attachments: Attachment[], options: ParseMailOptions): Promise<MediaItem[]> {
  const out: MediaItem[] = [];
  let created = false;
  for (const [index, attachment] of attachments.entries()) {
    if (attachment.related) continue;
    const name = attachment.filename ?? `attachment-${index + 1}`;
    if (attachment.size > options.maxAttachmentBytes) {
      options.onSkipped?.(name, `larger than ${options.maxAttachmentBytes} bytes`);
      continue;
    }
    try {
      if (!created) {
        await mkdir(options.mediaDir, { recursive: true });
        created = true;
      }
      const path = join(options.mediaDir, `${options.uidValidity}-${options.uid}-${index + 1}-${safeFileName(name)}`);
      await writeFile(path, attachment.content);
      out.push({ kind: mediaKind(attachment.contentType), mimeType: attachment.contentType, name, path });
    } catch (error) {
      options.onSkipped?.(name, error instanceof Error ? error.message : String(error));
    }
  }
  return out;
}

/** Sender-chosen names never pick the directory or hide as dotfiles. */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  const cleaned = base.replace(/[^\w.-]+/g, "_").replace(/^\.+/, "").slice(-100);
  return cleaned || "attachment";
}

function mediaKind(contentType: string): MediaItem["kind"] {
  const type = contentType.split("/")[0]?.toLowerCase();
  return type === "image" || type === "audio" || type === "video" ? type : "document";
}
