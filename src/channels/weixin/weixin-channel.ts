/**
 * Personal WeChat through the iLink bot API: `getupdates` long polls (the cursor kept in
 * account.json), each message's context token remembered for the replies, which go out with
 * `sendmessage` — text split at 1800 characters, files encrypted and uploaded to the CDN first.
 * WeChat cannot edit a sent message, so a streamed reply is sent once, at its end (or in a few
 * blocks with `blockStreaming`). A reply that
 * WeChat will not take under the current context token waits (up to 3 per chat) for the user's
 * next message, as the Python nanobot does.
 */
import { createHash, randomBytes } from "node:crypto";
import type { OutboundMessage } from "../../bus/types.js";
import { ConfigError, errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { DeliveryError } from "../delivery/delivery-queue.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import { BlockStreamer } from "./block-stream.js";
import { WeixinApi, WeixinAuthError, WeixinQuotaError, checkBody, classifyWeixinError } from "./api.js";
import type { WeixinConfig } from "./config.js";
import { mediaDirFor, parseWeixinMessage } from "./inbound.js";
import type { WeixinMessage } from "./inbound.js";
import { ITEM_TEXT, uploadMedia } from "./media.js";
import { WeixinPoller } from "./poller.js";
import { WeixinSession } from "./session.js";
import { splitWeixinText } from "./text.js";
import { WeixinTyping } from "./typing.js";

const MESSAGE_TYPE_BOT = 2;
const MESSAGE_STATE_FINISH = 2;
/** WeChat lets a context token lapse after ~90 s idle; an older one is refreshed before use. */
const CONTEXT_MAX_AGE_MS = 60_000;
const MAX_DEFERRED_PER_CHAT = 3;
/** Asking messages whose context token is remembered, so a reply goes under the token of the message it answers. */
const MAX_MESSAGE_TOKENS = 256;

type Reply = Extract<OutboundMessage, { kind: "message" }>;

export interface WeixinChannelOptions extends ChannelDeps {
  config: WeixinConfig;
  name?: string;
}

export class WeixinChannel implements Channel {
  readonly name: string;
  private readonly config: WeixinConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private readonly session: WeixinSession;
  private api: WeixinApi | undefined;
  private typing: WeixinTyping | undefined;
  private poller: WeixinPoller | undefined;
  private connection: ChannelConnection = { connected: false };
  private readonly hints = new Map<string, string[]>();
  private readonly deferred = new Map<string, Reply[]>();
  /** messageId → the context token it came with (newest MAX_MESSAGE_TOKENS). */
  private readonly messageTokens = new Map<string, string>();
  private readonly mediaKeys = new Map<string, { fileKey: string; aesKey: Buffer }>();
  /** Only with `blockStreaming` (and `streaming`): the channel then asks for streamed deltas. */
  private readonly blocks: BlockStreamer | undefined;

  constructor(options: WeixinChannelOptions) {
    this.name = options.name ?? "weixin";
    this.config = options.config;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
    const { blockStreaming, streaming, blockStreamingMinChars, blockStreamingMaxMessages } = options.config;
    this.blocks =
      blockStreaming && streaming
        ? new BlockStreamer({
            minChars: blockStreamingMinChars,
            maxMessages: blockStreamingMaxMessages,
            send: (chatId, streamId, index, text) => this.sendBlock(chatId, streamId, index, text),
            onError: (error) => this.log.warn("weixin block not sent; the rest of the reply comes at its end", { error: errorMessage(error) }),
          })
        : undefined;
    this.session = new WeixinSession({ stateDir: options.config.stateDir, configToken: options.config.token, configBaseUrl: options.config.baseUrl, budget: options.config.contextMessageBudget, clock: options.clock });
  }

  status(): ChannelConnection {
    return { ...this.connection };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.poller) return;
    if (!(await this.session.load())) {
      const path = `channels.${this.name}.token`;
      throw new ConfigError(`${path}: expected a WeChat bot token — run \`nanobot channels login ${this.name}\` to scan the QR code (it stores the token in ${this.config.stateDir}/account.json), or set ${path}`, { path, expected: "a bot token from the QR login" });
    }
    const api = new WeixinApi({ baseUrl: this.session.baseUrl, token: this.session.token, routeTag: this.config.routeTag ?? null });
    this.api = api;
    this.typing = new WeixinTyping(api, this.session, this.deps.clock);
    await this.notify("start", signal);
    this.poller = new WeixinPoller({
      api,
      session: this.session,
      clock: this.deps.clock,
      logger: this.log,
      pollTimeoutS: this.config.pollTimeout,
      onMessage: (message) => this.onMessage(message),
      onState: (connected, problem) => {
        this.connection = { connected, ...(problem ? { lastError: problem } : this.connection.lastError ? { lastError: this.connection.lastError } : {}) };
      },
    });
    this.poller.start();
    this.connection = { connected: true };
    this.log.info("weixin polling", { baseUrl: this.session.baseUrl });
  }

  async stop(): Promise<void> {
    const poller = this.poller;
    this.poller = undefined;
    if (!poller) return;
    await poller.stop();
    this.typing?.stopAll();
    await this.notify("stop");
    await this.session.save().catch((error: unknown) => this.log.warn("weixin state not saved", { error: errorMessage(error) }));
    this.connection = { ...this.connection, connected: false };
  }

  /** Tells the server the bot came online / went away; best effort. */
  private async notify(action: "start" | "stop", signal?: AbortSignal): Promise<void> {
    try {
      checkBody(`notify${action}`, await this.api!.post(`ilink/bot/msg/notify${action}`, {}, { timeoutMs: 10_000, ...(signal ? { signal } : {}) }));
    } catch (error) {
      this.log.warn(`weixin notify${action} failed (ignored)`, { error: errorMessage(error) });
    }
  }

  async send(message: OutboundMessage): Promise<void> {
    switch (message.kind) {
      case "message":
        return this.sendReply(message);
      case "stream_end": {
        // WeChat cannot edit: what no block carried goes out once, at the end.
        const content = this.blocks ? this.blocks.finish(message.streamId, message.content) : message.content;
        return this.sendReply({ kind: "message", channel: message.channel, chatId: message.chatId, id: message.id, content, ...(message.replyTo ? { replyTo: message.replyTo } : {}) });
      }
      case "progress":
        return this.sendProgress(message.chatId, message.text, message.toolName !== undefined);
      case "delta":
        return this.blocks?.delta(message.chatId, message.streamId, message.delta);
      case "typing":
        return;
    }
  }

  private async onMessage(message: WeixinMessage): Promise<void> {
    if (message.message_type === MESSAGE_TYPE_BOT) return;
    const from = message.from_user_id ?? "";
    if (!from) return;
    const messageId = String(message.message_id ?? message.seq ?? "") || `${from}_${message.create_time_ms ?? ""}`;
    const contextToken = message.context_token ?? "";
    const { content, media } = await parseWeixinMessage(message, { cdnBaseUrl: this.config.cdnBaseUrl, mediaDir: mediaDirFor(this.deps.home, this.name), messageId, logger: this.log });
    // Group chats reach a personal bot only as a `…@chatroom` sender; they follow allowFrom like any group.
    const isDirect = !from.endsWith("@chatroom");
    const input = { id: `${this.name}:${messageId}`, chatId: from, sender: { id: from }, content, isDirect, ...(media.length ? { media } : {}), metadata: { messageId, ...(this.blocks ? { stream: true } : {}) } };
    // Only admitted senders' tokens are kept, and before the message goes on (its reply may come
    // at once): the bot must never be able to write to a stranger later.
    const admitted = (): void => {
      if (!contextToken) return;
      this.session.setContextToken(from, contextToken);
      this.messageTokens.set(messageId, contextToken);
      if (this.messageTokens.size > MAX_MESSAGE_TOKENS) this.messageTokens.delete(this.messageTokens.keys().next().value!);
    };
    const outcome = await this.deps.gate.receive({ ...input, onAdmitted: admitted }, async (text) => {
      if (!contextToken) return this.log.warn("weixin pairing code not sent: the message carried no context_token", { senderId: from });
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => this.postText(from, text, contextToken, `pairing-${messageId}`), classifyWeixinError);
    });
    if (outcome !== "forwarded") return;
    if (contextToken) await this.session.save().catch((error: unknown) => this.log.warn("weixin state not saved", { error: errorMessage(error) }));
    await this.typing?.start(from);
    await this.retryDeferred(from);
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  /** A client id stable per delivery part, so WeChat can tell a retried send from a new one. */
  private clientId(id: string, part: string | number): string {
    return `nanobot-${createHash("sha256").update(`${id}:${part}`).digest("hex").slice(0, 20)}`;
  }

  private async sendReply(message: Reply): Promise<void> {
    const { chatId, id } = message;
    await this.typing?.stop(chatId);
    await this.flushHints(chatId);
    try {
      // Under the asking message's own token (WeChat threads the reply to it) while it has budget left.
      const contextToken = this.tokenOfMessage(message.replyTo) ?? (await this.contextFor(chatId));
      for (const [i, item] of (message.media ?? []).entries()) {
        await this.deps.delivery.deliver(this.key(id, `media${i}`), () => this.postMedia(chatId, item, contextToken, id, i), classifyWeixinError).catch(async (error: unknown) => {
          const cause = error instanceof DeliveryError ? error.cause : error;
          if (cause instanceof WeixinQuotaError || cause instanceof WeixinAuthError || (error instanceof DeliveryError && classifyWeixinError(cause).retryable)) throw error;
          const label = item.name ?? item.path ?? "file";
          this.log.warn("weixin file send failed, sending a note instead", { file: label, error: errorMessage(cause) });
          await this.deps.delivery.deliver(this.key(id, `note${i}`), () => this.postText(chatId, `[Failed to send: ${label}]`, contextToken, this.clientId(id, `note${i}`)), classifyWeixinError);
        });
      }
      for (const [i, chunk] of splitWeixinText(message.content).entries()) {
        await this.deps.delivery.deliver(this.key(id, i), () => this.postText(chatId, chunk, contextToken, this.clientId(id, i)), classifyWeixinError);
      }
    } catch (error) {
      const cause = error instanceof DeliveryError ? error.cause : error;
      if (cause instanceof WeixinQuotaError) return this.defer(message, cause);
      if (cause instanceof WeixinAuthError) this.connection = { connected: false, lastError: cause.message };
      throw error;
    }
  }

  private tokenOfMessage(messageId: string | undefined): string | undefined {
    const token = messageId ? this.messageTokens.get(messageId) : undefined;
    if (!token) return undefined;
    try {
      this.session.checkBudget(token);
      return token;
    } catch {
      return undefined;
    }
  }

  /** The chat's context token, refreshed through getconfig when it may have lapsed. */
  private async contextFor(chatId: string): Promise<string> {
    const token = this.session.contextToken(chatId);
    if (!token) throw new WeixinQuotaError("sendmessage", `no context token for ${chatId} yet (the user has not written to the bot)`, { retryable: false });
    if (this.session.contextAge(chatId) < CONTEXT_MAX_AGE_MS) return token;
    try {
      const body = checkBody("getconfig", await this.api!.post("ilink/bot/getconfig", { ilink_user_id: chatId, context_token: token }, { timeoutMs: 10_000 }));
      const fresh = typeof body.context_token === "string" ? body.context_token : "";
      if (fresh && fresh !== token) {
        this.session.setContextToken(chatId, fresh);
        await this.session.save();
        return fresh;
      }
    } catch (error) {
      this.log.debug("weixin context token refresh failed", { chatId, error: errorMessage(error) });
    }
    return token;
  }

  private defer(message: Reply, cause: Error): void {
    const queue = this.deferred.get(message.chatId) ?? [];
    if (!queue.some((m) => m.id === message.id)) queue.push(message);
    while (queue.length > MAX_DEFERRED_PER_CHAT) {
      const dropped = queue.shift()!;
      this.log.warn("weixin deferred reply dropped: too many waiting for this chat", { chatId: message.chatId, id: dropped.id });
    }
    this.deferred.set(message.chatId, queue);
    this.log.warn("weixin reply deferred until the user writes again", { chatId: message.chatId, id: message.id, reason: cause.message });
  }

  private async retryDeferred(chatId: string): Promise<void> {
    const queue = this.deferred.get(chatId);
    if (!queue?.length) return;
    this.deferred.delete(chatId);
    for (const message of queue) {
      await this.sendReply(message).catch((error: unknown) => this.log.error("weixin deferred reply failed", { chatId, id: message.id, error: errorMessage(error) }));
    }
  }

  private async sendProgress(chatId: string, text: string, isToolHint: boolean): Promise<void> {
    if (isToolHint) {
      // Hints are gathered and sent as one message before the next reply: every message costs quota.
      if (this.config.sendToolHints) this.hints.set(chatId, [...(this.hints.get(chatId) ?? []), text]);
      return;
    }
    if (!this.config.sendProgress || !text.trim()) return;
    const contextToken = this.session.contextToken(chatId);
    if (!contextToken) return;
    await this.deps.delivery
      .withRetries(`${this.name}:progress`, () => this.postText(chatId, sanitizeProgress(text), contextToken, undefined), classifyWeixinError)
      .catch((error: unknown) => this.log.warn("weixin progress not sent", { chatId, error: errorMessage(error) }));
  }

  private async flushHints(chatId: string): Promise<void> {
    const hints = this.hints.get(chatId);
    this.hints.delete(chatId);
    const contextToken = this.session.contextToken(chatId);
    if (!hints?.length || !contextToken) return;
    await this.postText(chatId, hints.join("\n\n"), contextToken, undefined).catch((error: unknown) => this.log.warn("weixin tool hints not sent", { chatId, error: errorMessage(error) }));
  }

  /** One block of a streamed reply; it keeps a message of the budget free for the reply's end. */
  private async sendBlock(chatId: string, streamId: string, index: number, text: string): Promise<void> {
    const contextToken = await this.contextFor(chatId);
    for (const [i, chunk] of splitWeixinText(text).entries()) {
      await this.deps.delivery.deliver(this.key(streamId, `block${index}.${i}`), () => this.postItem(chatId, { type: ITEM_TEXT, text_item: { text: chunk } }, contextToken, this.clientId(streamId, `block${index}.${i}`), 1), classifyWeixinError);
    }
  }

  private async postItem(toUserId: string, item: Record<string, unknown>, contextToken: string, clientId: string | undefined, reserve = 0): Promise<void> {
    this.session.checkBudget(contextToken, reserve);
    const msg = {
      from_user_id: "",
      to_user_id: toUserId,
      client_id: clientId ?? `nanobot-${randomBytes(6).toString("hex")}`,
      message_type: MESSAGE_TYPE_BOT,
      message_state: MESSAGE_STATE_FINISH,
      item_list: [item],
      context_token: contextToken,
    };
    checkBody("sendmessage", await this.api!.post("ilink/bot/sendmessage", { msg }));
    this.session.recordSend(contextToken);
  }

  private postText(toUserId: string, text: string, contextToken: string, clientId: string | undefined): Promise<void> {
    return this.postItem(toUserId, { type: ITEM_TEXT, text_item: { text } }, contextToken, clientId);
  }

  private async postMedia(chatId: string, item: NonNullable<Reply["media"]>[number], contextToken: string, id: string, index: number): Promise<void> {
    this.session.checkBudget(contextToken);
    // A retried upload reuses its file key and AES key; both are random, never derived from ids.
    const part = `${id}:media${index}`;
    const keys = this.mediaKeys.get(part) ?? { fileKey: randomBytes(16).toString("hex"), aesKey: randomBytes(16) };
    this.mediaKeys.set(part, keys);
    const mediaItem = await uploadMedia(this.api!, item, { toUserId: chatId, cdnBaseUrl: this.config.cdnBaseUrl, ...keys });
    await this.postItem(chatId, mediaItem, contextToken, this.clientId(id, `media${index}`));
    this.mediaKeys.delete(part);
  }
}

function sanitizeProgress(text: string): string {
  return splitWeixinText(text).join("\n");
}
