/**
 * QQ through the official bot API: the WebSocket gateway for C2C messages and group messages
 * (`GROUP_AT_MESSAGE_CREATE`, and `GROUP_MESSAGE_CREATE` where the group lets the bot see every
 * message), replies over REST as passive replies (`msg_id` of the asking message and a
 * per-message `msg_seq`), files uploaded as rich media (msg_type 7). QQ cannot edit a sent
 * message, so a streamed reply is sent once, at its end; it has no typing indicator for bots,
 * so `ackMessage` tells the user the bot is working.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { GateInput } from "../access/inbound-gate.js";
import { splitMessage } from "../delivery/split-message.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import { QQApi, classifyQQError, filesPath, messagesPath } from "./api.js";
import type { ChatKind } from "./api.js";
import { QQ_TEXT_LIMIT } from "./config.js";
import type { QQConfig } from "./config.js";
import { QQGateway } from "./gateway.js";

/** How long QQ accepts a passive reply to a message (it refuses later ones). */
const PASSIVE_REPLY_MS = 5 * 60 * 1000;
const IMAGE_FILE = 1;
const PLAIN_FILE = 4;

export interface QQChannelOptions extends ChannelDeps {
  config: QQConfig;
  name?: string;
}

interface Attachment {
  url?: string;
  filename?: string;
  content_type?: string;
  size?: number;
}

export class QQChannel implements Channel {
  readonly name: string;
  private readonly config: QQConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private api: QQApi | undefined;
  private gateway: QQGateway | undefined;
  private connection: ChannelConnection = { connected: false };
  /** Chat id → user or group (learned from the messages that come in). */
  private readonly kinds = new Map<string, ChatKind>();
  /** The last message per chat, for passive replies that name no message. */
  private readonly lastInbound = new Map<string, { id: string; at: number }>();
  /** msg_seq per replied-to message: QQ refuses a repeated (msg_id, msg_seq). */
  private readonly seqs = new Map<string, number>();
  private activeSeq = 0;

  constructor(options: QQChannelOptions) {
    this.name = options.name ?? "qq";
    this.config = options.config;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
  }

  status(): ChannelConnection {
    return { ...this.connection };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.gateway) return;
    const { appId, secret, apiBase, tokenUrl } = this.config;
    const api = new QQApi({ appId, secret, apiBase, tokenUrl, clock: this.deps.clock });
    this.api = api;
    const gateway = new QQGateway({
      api,
      intents: this.config.intents,
      clock: this.deps.clock,
      logger: this.log,
      onDispatch: (type, data) => this.onDispatch(type, data),
      onState: (connected, problem) => {
        this.connection = { connected, ...(problem ? { lastError: problem } : this.connection.lastError ? { lastError: this.connection.lastError } : {}) };
        if (problem) this.log.warn("qq gateway problem", { error: problem });
      },
    });
    this.gateway = gateway;
    try {
      await gateway.start(signal);
    } catch (error) {
      this.connection = { connected: false, lastError: errorMessage(error) };
      throw new Error(`${this.name}: ${errorMessage(error)} (check channels.${this.name}.appId and channels.${this.name}.secret)`, { cause: error });
    }
    this.connection = { connected: true };
    this.log.info("qq connected", { bot: gateway.botId });
  }

  async stop(): Promise<void> {
    this.gateway?.stop();
    this.gateway = undefined;
    this.connection = { ...this.connection, connected: false };
  }

  async send(message: OutboundMessage): Promise<void> {
    switch (message.kind) {
      case "message":
        return this.sendReply(message.chatId, message.id, message.content, message.media, message.replyTo);
      case "stream_end":
        // QQ cannot edit: the whole reply goes out once, at the end.
        return this.sendReply(message.chatId, message.id, message.content, undefined, message.replyTo);
      case "progress":
        if (!this.config.sendProgress) return;
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => this.postText(message.chatId, message.text, undefined), classifyQQError);
        return;
      case "delta":
      case "typing":
        return;
    }
  }

  private onDispatch(type: string, data: Record<string, unknown>): void {
    const kind: ChatKind | undefined = type === "C2C_MESSAGE_CREATE" ? "user" : type === "GROUP_AT_MESSAGE_CREATE" || type === "GROUP_MESSAGE_CREATE" ? "group" : undefined;
    if (!kind) return;
    if (type === "GROUP_MESSAGE_CREATE" && this.config.groupPolicy !== "open") return;
    this.onMessage(kind, data).catch((error: unknown) => this.log.error("qq message failed", { error: errorMessage(error) }));
  }

  private async onMessage(kind: ChatKind, data: Record<string, unknown>): Promise<void> {
    const author = (data.author ?? {}) as { user_openid?: string; member_openid?: string; id?: string };
    const senderId = kind === "user" ? (author.user_openid ?? author.id) : author.member_openid;
    const chatId = kind === "user" ? senderId : (data.group_openid as string | undefined);
    const messageId = typeof data.id === "string" ? data.id : undefined;
    if (!senderId || !chatId || !messageId) return;
    this.kinds.set(chatId, kind);
    const content = (typeof data.content === "string" ? data.content : "").trim();
    const media = await this.downloadAll(Array.isArray(data.attachments) ? (data.attachments as Attachment[]) : []);
    if (!content && media.length === 0) return;
    const input: GateInput = {
      id: `${chatId}:${messageId}`,
      chatId,
      sender: { id: senderId },
      content,
      isDirect: kind === "user",
      metadata: { messageId, chatType: kind === "user" ? "c2c" : "group" },
    };
    if (media.length) input.media = media;
    this.lastInbound.set(chatId, { id: messageId, at: this.deps.clock.now() });
    const outcome = await this.deps.gate.receive(input, async (text) => {
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => this.postText(chatId, text, messageId), classifyQQError);
    });
    if (outcome === "forwarded" && this.config.ackMessage) {
      await this.postText(chatId, this.config.ackMessage, messageId).catch((error: unknown) => this.log.debug("qq ack failed", { error: errorMessage(error) }));
    }
  }

  private async downloadAll(attachments: Attachment[]): Promise<MediaItem[]> {
    const out: MediaItem[] = [];
    const dir = this.config.mediaDir || join(this.deps.home, "media", this.name);
    for (const [i, attachment] of attachments.entries()) {
      if (!attachment.url || (attachment.size ?? 0) > this.config.downloadMaxBytes) continue;
      try {
        const url = attachment.url.startsWith("//") ? `https:${attachment.url}` : attachment.url;
        const response = await fetch(url);
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        const bytes = new Uint8Array(await response.arrayBuffer());
        if (bytes.length > this.config.downloadMaxBytes) continue;
        const name = basename(attachment.filename || `attachment-${i}`).replace(/[^\w.-]/g, "_");
        await mkdir(dir, { recursive: true });
        const path = join(dir, `${this.deps.clock.now()}_${i}_${name}`);
        await writeFile(path, bytes);
        const mimeType = attachment.content_type;
        const kind = mimeType?.startsWith("image/") ? "image" : mimeType?.startsWith("audio/") || mimeType === "voice" ? "audio" : mimeType?.startsWith("video/") ? "video" : "document";
        out.push({ kind, path, name, ...(mimeType ? { mimeType } : {}) });
      } catch (error) {
        this.log.warn("qq attachment download failed", { error: errorMessage(error) });
      }
    }
    return out;
  }

  private rest(): QQApi {
    if (!this.api) throw new Error(`${this.name}: channel not started`);
    return this.api;
  }

  /** The message a reply passively answers: the one named, else the chat's last one while QQ still accepts it. */
  private replyTarget(chatId: string, replyTo: string | undefined): string | undefined {
    if (replyTo) return replyTo;
    const last = this.lastInbound.get(chatId);
    return last && this.deps.clock.now() - last.at < PASSIVE_REPLY_MS ? last.id : undefined;
  }

  private nextSeq(msgId: string | undefined): number {
    if (!msgId) return ++this.activeSeq;
    const seq = (this.seqs.get(msgId) ?? 0) + 1;
    this.seqs.set(msgId, seq);
    return seq;
  }

  private async postMessage(chatId: string, body: Record<string, unknown>, msgId: string | undefined): Promise<string> {
    const kind = this.kinds.get(chatId) ?? "user";
    const payload = { ...body, ...(msgId ? { msg_id: msgId } : {}), msg_seq: this.nextSeq(msgId) };
    const sent = await this.rest().request<{ id?: string }>("POST", messagesPath(kind, chatId), payload);
    return sent.id ?? "";
  }

  private postText(chatId: string, text: string, msgId: string | undefined): Promise<string> {
    const body = this.config.msgFormat === "markdown" ? { msg_type: 2, markdown: { content: text } } : { msg_type: 0, content: text };
    return this.postMessage(chatId, body, msgId);
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  private async sendReply(chatId: string, id: string, content: string, media: MediaItem[] | undefined, replyTo: string | undefined): Promise<void> {
    const msgId = this.replyTarget(chatId, replyTo);
    // Files first, then the text (as the Python nanobot).
    for (const [i, item] of (media ?? []).entries()) {
      await this.deps.delivery.deliver(this.key(id, `media${i}`), () => this.sendFile(chatId, item, msgId), classifyQQError).catch(async (error: unknown) => {
        const label = item.name ?? item.path ?? "file";
        this.log.warn("qq file send failed, sending a note instead", { file: label, error: errorMessage(error) });
        await this.deps.delivery.deliver(this.key(id, `note${i}`), () => this.postText(chatId, `[Attachment send failed: ${label}]`, msgId), classifyQQError);
      });
    }
    for (const [i, chunk] of splitMessage(content.trim(), QQ_TEXT_LIMIT).entries()) {
      await this.deps.delivery.deliver(this.key(id, i), () => this.postText(chatId, chunk, msgId), classifyQQError);
    }
  }

  /** Uploads the file as rich media (base64), then sends it as msg_type 7. */
  private async sendFile(chatId: string, item: MediaItem, msgId: string | undefined): Promise<string> {
    if (!item.path) throw new Error("qq: only local files can be sent");
    const data = await readFile(item.path);
    const name = item.name ?? basename(item.path);
    const image = item.kind === "image" || item.mimeType?.startsWith("image/") === true;
    const kind = this.kinds.get(chatId) ?? "user";
    const upload: Record<string, unknown> = { file_type: image ? IMAGE_FILE : PLAIN_FILE, file_data: data.toString("base64"), srv_send_msg: false };
    if (!image) upload.file_name = name;
    const uploaded = await this.rest().request<{ file_info?: string }>("POST", filesPath(kind, chatId), upload);
    if (!uploaded.file_info) throw new Error(`qq: upload of ${name} returned no file_info`);
    return this.postMessage(chatId, { msg_type: 7, content: " ", media: { file_info: uploaded.file_info } }, msgId);
  }
}
