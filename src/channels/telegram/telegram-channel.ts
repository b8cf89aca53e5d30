/**
 * Telegram through grammY: long polling (or a webhook handler the gateway mounts), text and
 * media both ways, group mention rules, streamed replies by editing one message at a bounded
 * rate, and typing indicators. Every send with a delivery id goes through the shared
 * `DeliveryQueue`, one key per chunk, so a retry never repeats a chunk already sent.
 */
import { join } from "node:path";
import { Bot, InputFile, webhookCallback } from "grammy";
import type { Message } from "grammy/types";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { LruSet } from "../delivery/lru-set.js";
import { splitRendered } from "../delivery/split-message.js";
import { StreamEditor } from "../delivery/stream-editor.js";
import { TypingKeeper } from "../delivery/typing-keeper.js";
import type { Channel, ChannelDeps } from "../types.js";
import type { TelegramConfig } from "./config.js";
import { downloadTelegramFile, toGateInput } from "./inbound.js";
import type { BotIdentity } from "./inbound.js";
import { markdownToTelegramHtml } from "./markdown-html.js";
import {
  TELEGRAM_TEXT_LIMIT,
  chatIdFor,
  classifyTelegramError,
  editFormatted,
  placementOptions,
  sendFormatted,
} from "./send.js";
import type { FormattedChunk, SendExtras } from "./send.js";

const DEFAULT_API_ROOT = "https://api.telegram.org";
/** Remembered forum topics of asking messages; the oldest are dropped. */
const TOPIC_MEMORY = 5_000;

export interface TelegramChannelOptions extends ChannelDeps {
  config: TelegramConfig;
  /** Defaults to "telegram"; a second bot can run as another channel name. */
  name?: string;
}

interface OpenStream {
  chatId: string;
  editor: StreamEditor<number>;
}

export class TelegramChannel implements Channel {
  readonly name: string;
  private readonly config: TelegramConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private bot: Bot | undefined;
  private identity: BotIdentity | undefined;
  private polling: Promise<void> | undefined;
  private readonly streams = new Map<string, OpenStream>();
  /** Streams already finished: a late delta must not open a second preview. */
  private readonly ended = new LruSet(1_000);
  private readonly typing: TypingKeeper;
  /** `chat:message id` → the forum topic it was written in: the reply goes to the same topic. */
  private readonly topics = new Map<string, number>();

  constructor(options: TelegramChannelOptions) {
    this.name = options.name ?? "telegram";
    this.config = options.config;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
    this.typing = new TypingKeeper({
      clock: options.clock,
      send: async (chatId) => {
        // Best effort: a lost typing indicator is not worth an error report.
        await this.bot?.api.sendChatAction(chatIdFor(chatId), "typing").catch((error: unknown) => {
          this.log.debug("typing failed", { error: errorMessage(error) });
        });
      },
    });
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.bot) return;
    const bot = new Bot(this.config.token, { client: { apiRoot: this.apiRoot() } });
    bot.catch((err) => this.log.error("telegram update failed", { error: errorMessage(err.error) }));
    bot.on("message", (ctx) => this.onMessage(ctx.message));
    // grammY types its signal as the abort-controller polyfill's; the runtime accepts Node's.
    await bot.init(signal as Parameters<Bot["init"]>[0]);
    this.bot = bot;
    this.identity = { id: bot.botInfo.id, username: bot.botInfo.username };
    if (this.config.mode === "webhook") {
      if (this.config.webhookUrl) {
        await bot.api.setWebhook(this.config.webhookUrl, this.config.webhookSecret ? { secret_token: this.config.webhookSecret } : {});
      }
      this.log.info("telegram webhook mode", { bot: this.identity.username });
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(new Error("telegram start aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
      this.polling = bot
        .start({
          timeout: this.config.pollingTimeoutS,
          allowed_updates: ["message"],
          onStart: () => {
            signal.removeEventListener("abort", onAbort);
            resolve();
          },
        })
        .catch((error: unknown) => {
          // Fatal polling errors (401 bad token, 409 another poller) end the channel.
          this.log.error("telegram polling stopped", { error: errorMessage(error) });
          reject(error instanceof Error ? error : new Error(errorMessage(error)));
        });
    });
    this.log.info("telegram polling", { bot: this.identity.username });
  }

  async stop(): Promise<void> {
    const bot = this.bot;
    if (!bot) return;
    this.typing.stopAll();
    for (const stream of this.streams.values()) await stream.editor.finish();
    this.streams.clear();
    if (bot.isRunning()) await bot.stop().catch((error: unknown) => this.log.warn("telegram stop failed", { error: errorMessage(error) }));
    await this.polling;
    this.polling = undefined;
    this.bot = undefined;
  }

  /**
   * For webhook mode: a fetch-style handler (Hono: `app.post(path, (c) => handler(c.req.raw))`).
   * Answers 503 until the channel has started.
   */
  webhookHandler(): (request: Request) => Promise<Response> {
    let cached: { bot: Bot; handle: (request: Request) => Promise<Response> } | undefined;
    return async (request) => {
      const bot = this.bot;
      if (!bot) return new Response("telegram channel not started", { status: 503 });
      // A restarted channel has a new Bot: rebuild the callback for it.
      if (cached?.bot !== bot) {
        cached = { bot, handle: webhookCallback(bot, "std/http", this.config.webhookSecret ? { secretToken: this.config.webhookSecret } : {}) };
      }
      return cached.handle(request);
    };
  }

  async send(message: OutboundMessage): Promise<void> {
    const api = this.api();
    switch (message.kind) {
      case "message":
        this.typing.stop(message.chatId);
        return this.sendReply(message.chatId, message.id, message.content, message.media, this.extras(message.chatId, message.metadata, message.replyTo));
      case "delta":
        return this.onDelta(message.streamId, message.chatId, message.delta, this.extras(message.chatId, message.metadata, message.replyTo));
      case "stream_end":
        this.typing.stop(message.chatId);
        return this.onStreamEnd(message.streamId, message.chatId, message.id, message.content, this.extras(message.chatId, message.metadata, message.replyTo));
      case "progress": {
        if (!this.config.sendProgress) return;
        // In the asking message's topic, without quoting it.
        const { messageThreadId } = this.extras(message.chatId, message.metadata, message.replyTo);
        const topic = placementOptions(messageThreadId === undefined ? {} : { messageThreadId });
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => api.sendMessage(chatIdFor(message.chatId), message.text, topic), classifyTelegramError);
        return;
      }
      case "typing":
        return this.typing.start(message.chatId);
    }
  }

  private api(): Bot["api"] {
    if (!this.bot) throw new Error(`${this.name}: channel not started`);
    return this.bot.api;
  }

  private apiRoot(): string {
    return (this.config.apiRoot ?? DEFAULT_API_ROOT).replace(/\/+$/, "");
  }

  private extras(chatId: string, metadata: Record<string, unknown> | undefined, replyTo?: string): SendExtras {
    const extras: SendExtras = {};
    const thread = metadata?.messageThreadId ?? (replyTo ? this.topics.get(`${chatId}:${replyTo}`) : undefined);
    if (typeof thread === "number") extras.messageThreadId = thread;
    if (this.config.replyToMessage && replyTo && /^\d+$/.test(replyTo)) extras.replyTo = Number(replyTo);
    return extras;
  }

  private async onMessage(message: Message): Promise<void> {
    const identity = this.identity;
    if (!identity) return;
    const input = await toGateInput(message, {
      channel: this.name,
      bot: identity,
      groupPolicy: this.config.groupPolicy,
      download: (fileId, item, uniqueId) => this.download(fileId, item, uniqueId),
    });
    if (!input) return;
    const chatId = input.chatId;
    // Known before the gate publishes: the agent may answer before receive() returns.
    if (typeof input.metadata?.messageThreadId === "number") this.rememberTopic(chatId, message.message_id, input.metadata.messageThreadId);
    const outcome = await this.deps.gate.receive(input, async (text) => {
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => this.api().sendMessage(chatIdFor(chatId), text), classifyTelegramError);
    });
    // "typing…" from the moment the message is handed to the agent until the reply is sent.
    if (outcome === "forwarded") void this.typing.start(chatId);
  }

  private rememberTopic(chatId: string, messageId: number, topic: number): void {
    this.topics.set(`${chatId}:${messageId}`, topic);
    if (this.topics.size > TOPIC_MEMORY) {
      const oldest = this.topics.keys().next().value;
      if (oldest !== undefined) this.topics.delete(oldest);
    }
  }

  private async download(fileId: string, item: Omit<MediaItem, "path">, uniqueId: string): Promise<MediaItem | undefined> {
    try {
      const file = await this.api().getFile(fileId);
      if (!file.file_path) return undefined;
      const path = await downloadTelegramFile({
        fileUrl: `${this.apiRoot()}/file/bot${this.config.token}/${file.file_path}`,
        filePath: file.file_path,
        uniqueId,
        dir: join(this.deps.home, "media", this.name),
        name: item.name,
      });
      return { ...item, path };
    } catch (error) {
      this.log.warn("telegram media download failed", { error: errorMessage(error) });
      return undefined;
    }
  }

  private render(content: string): FormattedChunk[] {
    return splitRendered(content, TELEGRAM_TEXT_LIMIT, markdownToTelegramHtml);
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  private async sendReply(chatId: string, id: string, content: string, media: MediaItem[] | undefined, extras: SendExtras): Promise<void> {
    const api = this.api();
    const chunks = this.render(content);
    for (const [i, chunk] of chunks.entries()) {
      const chunkExtras = i === 0 ? extras : { messageThreadId: extras.messageThreadId };
      await this.deps.delivery.deliver(this.key(id, i), () => sendFormatted(api, chatId, chunk, chunkExtras), classifyTelegramError);
    }
    for (const [i, item] of (media ?? []).entries()) {
      await this.deps.delivery.deliver(this.key(id, `media${i}`), () => this.sendMedia(chatId, item, extras), classifyTelegramError);
    }
  }

  private async sendMedia(chatId: string, item: MediaItem, extras: SendExtras): Promise<number> {
    const source = item.path ? new InputFile(item.path, item.name) : item.url;
    if (source === undefined) throw new Error("media item has neither path nor url");
    const other = extras.messageThreadId !== undefined ? { message_thread_id: extras.messageThreadId } : {};
    const api = this.api();
    const sent =
      item.kind === "image"
        ? await api.sendPhoto(chatIdFor(chatId), source, other)
        : await api.sendDocument(chatIdFor(chatId), source, other);
    return sent.message_id;
  }

  private onDelta(streamId: string, chatId: string, delta: string, extras: SendExtras): void {
    if (!this.config.streaming || this.ended.has(streamId)) return;
    let stream = this.streams.get(streamId);
    if (!stream) {
      this.typing.stop(chatId);
      const api = this.api();
      const editor = new StreamEditor<number>(
        {
          // The preview answers the asking message (replyToMessage) in its topic, as the final reply would.
          post: async (text) => (await api.sendMessage(chatIdFor(chatId), text, placementOptions(extras))).message_id,
          edit: async (ref, text) => {
            await api.editMessageText(chatIdFor(chatId), ref, text);
          },
        },
        { intervalMs: this.config.streamEditIntervalMs, clock: this.deps.clock, previewLimit: TELEGRAM_TEXT_LIMIT, logger: this.log },
      );
      stream = { chatId, editor };
      this.streams.set(streamId, stream);
    }
    stream.editor.push(delta);
  }

  /** Turns the preview into the final formatted reply; extra chunks follow as new messages. */
  private async onStreamEnd(streamId: string, chatId: string, id: string, content: string, extras: SendExtras): Promise<void> {
    const stream = this.streams.get(streamId);
    this.streams.delete(streamId);
    this.ended.add(streamId);
    const ref = stream ? (await stream.editor.finish()).ref : undefined;
    const api = this.api();
    if (ref === undefined) return this.sendReply(chatId, id, content, undefined, extras);
    if (this.deps.delivery.isDelivered(this.key(id, 0))) {
      // A resumed turn re-streamed a reply that was already delivered: remove the extra preview.
      await api.deleteMessage(chatIdFor(chatId), ref).catch(() => undefined);
      return;
    }
    const chunks = this.render(content);
    for (const [i, chunk] of chunks.entries()) {
      const send = async (): Promise<void> => {
        if (i === 0) await editFormatted(api, chatId, ref, chunk);
        else await sendFormatted(api, chatId, chunk, { messageThreadId: extras.messageThreadId });
      };
      await this.deps.delivery.deliver(this.key(id, i), send, classifyTelegramError);
    }
  }
}
