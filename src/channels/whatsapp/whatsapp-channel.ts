/**
 * WhatsApp through the Cloud API: Meta calls the channel's webhook with incoming messages
 * (checked by signature), replies go out through the Graph API. Direct messages and groups
 * (groupPolicy open, or mention = an @mention of the business number / a reply to the bot),
 * replies threaded to the asking message, files both ways, typing. The Cloud API cannot edit a
 * sent message, so a streamed reply is sent once, at its end.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { GateInput } from "../access/inbound-gate.js";
import { LruSet } from "../delivery/lru-set.js";
import { splitMessage } from "../delivery/split-message.js";
import { TypingKeeper } from "../delivery/typing-keeper.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import type { WhatsAppConfig } from "./config.js";
import { GraphClient, classifyGraphError } from "./graph.js";
import { addressesBusiness, extensionFor, parseWebhook, stripMention } from "./inbound.js";
import type { WhatsAppInbound } from "./inbound.js";
import { WebhookServer } from "./webhook.js";

/** The Cloud API's limit on a text message's body. */
export const WHATSAPP_TEXT_LIMIT = 4096;

export interface WhatsAppChannelOptions extends ChannelDeps {
  config: WhatsAppConfig;
  name?: string;
}

export class WhatsAppChannel implements Channel {
  readonly name: string;
  private readonly config: WhatsAppConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private readonly graph: GraphClient;
  private webhook: WebhookServer | undefined;
  private readonly typing: TypingKeeper;
  /** Ids of messages this bot sent: a reply to one addresses the bot in a group. */
  private readonly own = new LruSet(5_000);
  /** Group ids seen, so replies go out with recipient_type "group". */
  private readonly groups = new LruSet(5_000);
  /** The last forwarded message per chat: the typing indicator is attached to it. */
  private readonly lastInbound = new Map<string, string>();
  private connection: ChannelConnection = { connected: false };

  constructor(options: WhatsAppChannelOptions) {
    this.name = options.name ?? "whatsapp";
    this.config = options.config;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
    this.graph = new GraphClient(options.config);
    // The Cloud API shows "typing…" for up to 25 s.
    this.typing = new TypingKeeper({
      clock: options.clock,
      refreshMs: 20_000,
      send: async (chatId) => {
        const messageId = this.lastInbound.get(chatId);
        if (!messageId) return;
        await this.graph.typing(messageId).catch((error: unknown) => this.log.debug("typing failed", { error: errorMessage(error) }));
      },
    });
  }

  status(): ChannelConnection {
    return { ...this.connection };
  }

  /** Where the webhook listens (for tests and the start-up log). */
  webhookAddress(): { host: string; port: number } | undefined {
    return this.webhook?.address();
  }

  async start(): Promise<void> {
    if (this.webhook) return;
    const webhook = new WebhookServer({
      host: this.config.webhookHost,
      port: this.config.webhookPort,
      path: this.config.webhookPath,
      verifyToken: this.config.verifyToken,
      appSecret: this.config.appSecret,
      onEvent: (payload) => {
        for (const message of parseWebhook(payload)) {
          this.onMessage(message).catch((error: unknown) => this.log.error("whatsapp message failed", { error: errorMessage(error) }));
        }
      },
      onRefused: (reason) => this.log.warn("whatsapp webhook request refused", { reason }),
    });
    try {
      await webhook.start();
    } catch (error) {
      const reason = `channels.${this.name}.webhookPort: cannot listen on ${this.config.webhookHost}:${this.config.webhookPort} (${errorMessage(error)})`;
      this.connection = { connected: false, lastError: reason };
      throw new Error(reason);
    }
    this.webhook = webhook;
    this.connection = { connected: true };
    const at = webhook.address();
    this.log.info("whatsapp webhook listening", { url: `http://${at?.host}:${at?.port}${this.config.webhookPath}` });
  }

  async stop(): Promise<void> {
    const webhook = this.webhook;
    this.webhook = undefined;
    this.typing.stopAll();
    await webhook?.stop();
    this.connection = { ...this.connection, connected: false };
  }

  async send(message: OutboundMessage): Promise<void> {
    switch (message.kind) {
      case "message":
        await this.sendReply(message.chatId, message.id, message.content, message.media, message.replyTo);
        return this.typing.stop(message.chatId);
      case "delta":
        // No preview: the whole reply goes out with stream_end.
        return;
      case "stream_end":
        await this.sendReply(message.chatId, message.id, message.content, undefined, message.replyTo);
        return this.typing.stop(message.chatId);
      case "progress": {
        if (!this.config.sendProgress) return;
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => this.postText(message.chatId, message.text), classifyGraphError);
        return;
      }
      case "typing":
        return this.typing.start(message.chatId);
    }
  }

  private async onMessage(message: WhatsAppInbound): Promise<void> {
    // Another business number on the same app: not ours.
    if (message.phoneNumberId && message.phoneNumberId !== this.config.phoneNumberId) return;
    const isDirect = message.groupId === undefined;
    const chatId = message.groupId ?? message.from;
    if (!isDirect) {
      this.groups.add(chatId);
      if (this.config.groupPolicy === "mention" && !addressesBusiness(message, (id) => this.own.has(id))) return;
    }
    const content = isDirect ? message.text.trim() : stripMention(message.text, message.businessNumber);
    const media = await this.download(message);
    const metadata: Record<string, unknown> = { messageId: message.id };
    if (message.name) metadata.senderName = message.name;
    if (message.replyTo) metadata.replyToMessageId = message.replyTo;
    if (!isDirect) metadata.groupId = chatId;
    const input: GateInput = { id: message.id, chatId, sender: { id: message.from }, content, isDirect, metadata };
    if (media) input.media = [media];
    const outcome = await this.deps.gate.receive(input, async (text) => {
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => this.postText(chatId, text), classifyGraphError);
    });
    if (outcome !== "forwarded") return;
    this.lastInbound.set(chatId, message.id);
    void this.typing.start(chatId);
  }

  private async download(message: WhatsAppInbound): Promise<MediaItem | undefined> {
    if (!message.media) return undefined;
    try {
      const { data, mimeType } = await this.graph.download(message.media.id);
      const type = message.media.mimeType ?? mimeType;
      const dir = join(this.deps.home, "media", this.name);
      await mkdir(dir, { recursive: true });
      const name = (message.media.filename ?? `${message.media.id}${extensionFor(type)}`).replace(/[^\w.-]/g, "_");
      const path = join(dir, `${message.id.replace(/[^\w.-]/g, "_")}_${name}`);
      await writeFile(path, data);
      return { kind: message.media.kind, path, name, ...(type ? { mimeType: type } : {}) };
    } catch (error) {
      this.log.warn("whatsapp media download failed", { error: errorMessage(error) });
      return undefined;
    }
  }

  private async postText(chatId: string, text: string, replyTo?: string): Promise<string> {
    const id = await this.graph.sendMessage(chatId, this.groups.has(chatId), { type: "text", text: { body: text, preview_url: false } }, replyTo);
    this.own.add(id);
    return id;
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  private async sendReply(chatId: string, id: string, content: string, media: MediaItem[] | undefined, replyTo: string | undefined): Promise<void> {
    const threadTo = replyTo?.startsWith("wamid.") ? replyTo : undefined;
    const chunks = splitMessage(content, WHATSAPP_TEXT_LIMIT);
    for (const [i, chunk] of chunks.entries()) {
      await this.deps.delivery.deliver(this.key(id, i), () => this.postText(chatId, chunk, i === 0 ? threadTo : undefined), classifyGraphError);
    }
    for (const [i, item] of (media ?? []).entries()) {
      const key = this.key(id, `media${i}`);
      if (this.deps.delivery.isDelivered(key)) continue;
      const label = item.name ?? item.path ?? item.url ?? "file";
      const data = item.path ? await readFile(item.path).catch(() => undefined) : undefined;
      if (!data) {
        this.log.warn("whatsapp attachment unreadable, sending a note instead", { file: label });
        await this.deps.delivery.deliver(key, () => this.postText(chatId, `[attachment: ${label} - send failed]`), classifyGraphError);
        continue;
      }
      const name = item.name ?? basename(item.path!);
      const mimeType = item.mimeType ?? "application/octet-stream";
      const type = item.kind === "document" ? "document" : item.kind;
      await this.deps.delivery.deliver(
        key,
        async () => {
          const mediaId = await this.graph.upload(data, mimeType, name);
          const body = type === "document" ? { id: mediaId, filename: name } : { id: mediaId };
          const sent = await this.graph.sendMessage(chatId, this.groups.has(chatId), { type, [type]: body });
          this.own.add(sent);
          return sent;
        },
        classifyGraphError,
      );
    }
  }
}
