/**
 * DingTalk in stream mode: robot messages arrive over the `dingtalk-stream` SDK's WebSocket
 * (each CALLBACK frame acknowledged at once, as the Python nanobot does, so DingTalk does not
 * redeliver it); replies go out through the robot send APIs as Markdown, or — with
 * `replyToMessage` — through the asking message's session webhook. DingTalk cannot edit a
 * robot message and has no typing indicator for robots, so a streamed reply is sent once, whole.
 */
import { join } from "node:path";
import type { DWClient } from "dingtalk-stream";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { splitMessage } from "../delivery/split-message.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import type { DingTalkConfig } from "./config.js";
import { isGroupMessage, parseRobotCallback, senderOf, toGateInput } from "./inbound.js";
import type { RobotCallback } from "./inbound.js";
import { DingTalkApi, classifyDingTalkError, isGroupChat } from "./openapi.js";
import { DINGTALK_TEXT_LIMIT, MARKDOWN_TITLE, escapeName, markdown, planMedia } from "./send.js";
import { createStreamClient } from "./stream-client.js";
import type { DWClientDownStream } from "./stream-client.js";

export interface DingTalkChannelOptions extends ChannelDeps {
  config: DingTalkConfig;
  name?: string;
}

/** A message a user sent, remembered so a reply to it can name the asker or use its webhook. */
interface AskingMessage {
  sender: string;
  senderName: string;
  group: boolean;
  webhook?: string;
  /** Epoch ms after which DingTalk refuses the webhook. */
  webhookExpiresAt: number;
}

const REMEMBERED_MESSAGES = 1_000;

/** The notice a direct message gets with `disablePrivateChat` (Chinese first, as DingTalk users read it). */
const PRIVATE_CHAT_OFF = "该机器人未开启私聊，请在群聊中与我对话。\nThis bot does not take direct messages; talk to it in a group chat.";

export class DingTalkChannel implements Channel {
  readonly name: string;
  private readonly config: DingTalkConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private readonly api: DingTalkApi;
  private client: DWClient | undefined;
  private stopped = false;
  private lastError: string | undefined;
  /** Messages are handled one at a time, in the order DingTalk sent them. */
  private queue: Promise<void> = Promise.resolve();
  private readonly asked = new Map<string, AskingMessage>();

  constructor(options: DingTalkChannelOptions) {
    this.name = options.name ?? "dingtalk";
    this.config = options.config;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
    this.api = new DingTalkApi({ ...options.config, clock: options.clock });
  }

  status(): ChannelConnection {
    return { connected: this.client?.connected === true, ...(this.lastError ? { lastError: this.lastError } : {}) };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.client) return;
    this.stopped = false;
    const client = await createStreamClient({
      clientId: this.config.clientId,
      clientSecret: this.config.clientSecret,
      apiRoot: this.config.apiRoot,
      onFrame: (frame) => this.onFrame(frame),
      onTicket: () => {
        // After stop(), a reconnection the SDK had scheduled must not open a new socket.
        if (this.stopped) throw new Error(`${this.name}: channel stopped`);
      },
      onTicketError: (error) => {
        if (this.stopped) return;
        this.lastError = errorMessage(error);
        this.log.warn("dingtalk stream ticket request failed", { error: this.lastError });
      },
    });
    this.client = client;
    try {
      if (signal.aborted) throw new Error("dingtalk start aborted");
      await client.getEndpoint();
      await client._connect();
    } catch (error) {
      this.lastError = errorMessage(error);
      this.client = undefined;
      this.stopped = true;
      client.disconnect();
      throw error;
    }
    this.log.info("dingtalk stream connected", { clientId: this.config.clientId });
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.stopped = true;
    if (!client) return;
    this.client = undefined;
    client.disconnect();
    await this.queue;
  }

  async send(message: OutboundMessage): Promise<void> {
    switch (message.kind) {
      case "message":
        return this.sendReply(message.chatId, message.id, message.content, message.media, message.replyTo);
      case "delta":
        // DingTalk cannot edit a robot message: the whole text goes out with stream_end.
        return;
      case "stream_end":
        return this.sendReply(message.chatId, message.id, message.content, undefined, message.replyTo);
      case "progress":
        if (!this.config.sendProgress) return;
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => this.api.sendRobotMessage(message.chatId, markdown(message.text)), classifyDingTalkError);
        return;
      case "typing":
        // DingTalk shows robots no typing indicator.
        return;
    }
  }

  private onFrame(frame: DWClientDownStream): void {
    // Acknowledged before handling (as the Python nanobot): DingTalk redelivers unacknowledged
    // messages, and the gate drops a redelivered one by its msgId anyway.
    this.client?.socketCallBackResponse(frame.headers.messageId, { status: "SUCCESS" });
    const message = parseRobotCallback(frame.data);
    if (!message) {
      this.log.warn("dingtalk frame without a robot message ignored", { messageId: frame.headers.messageId });
      return;
    }
    this.queue = this.queue
      .then(() => this.onMessage(message))
      .catch((error: unknown) => this.log.error("dingtalk message failed", { error: errorMessage(error) }));
  }

  private remember(message: RobotCallback): void {
    this.asked.set(message.msgId, {
      sender: senderOf(message),
      senderName: message.senderNick ?? "",
      group: isGroupMessage(message),
      ...(message.sessionWebhook ? { webhook: message.sessionWebhook } : {}),
      webhookExpiresAt: message.sessionWebhookExpiredTime ?? 0,
    });
    if (this.asked.size > REMEMBERED_MESSAGES) this.asked.delete(this.asked.keys().next().value!);
  }

  private async onMessage(message: RobotCallback): Promise<void> {
    if (this.stopped) return;
    if (!isGroupMessage(message) && this.config.disablePrivateChat) {
      // A hard switch, checked before access control: even allowed senders are sent to a group.
      const sender = senderOf(message);
      if (!sender) return;
      await this.deps.delivery.deliver(`${this.name}:private-off:${message.msgId}`, () => this.api.sendRobotMessage(sender, markdown(PRIVATE_CHAT_OFF)), classifyDingTalkError);
      return;
    }
    const input = await toGateInput(message, {
      channel: this.name,
      groupPolicy: this.config.groupPolicy,
      groupUserIsolation: this.config.groupUserIsolation,
      mediaDir: join(this.deps.home, "media", this.name),
      fetchFile: (code) => this.api.download(code),
      onDownloadError: (error) => this.log.warn("dingtalk file download failed", { error: errorMessage(error) }),
    });
    if (!input) return;
    this.remember(message);
    await this.deps.gate.receive(input, async (text) => {
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => this.api.sendRobotMessage(input.chatId, markdown(text)), classifyDingTalkError);
    });
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  private async sendReply(chatId: string, id: string, content: string, media: MediaItem[] | undefined, replyTo: string | undefined): Promise<void> {
    const asking = replyTo ? this.asked.get(replyTo) : undefined;
    let text = content.trim();
    // In a group, the reply is headed with the asker's name (the Python nanobot's way of showing whom it answers).
    if (text && isGroupChat(chatId) && asking?.group && asking.senderName) text = `# @${escapeName(asking.senderName)}\n\n${text}`;
    const webhook =
      this.config.replyToMessage && asking?.webhook && this.deps.clock.now() < asking.webhookExpiresAt ? asking.webhook : undefined;
    const at = asking?.group && asking.sender ? [asking.sender] : [];
    for (const [i, chunk] of splitMessage(text, DINGTALK_TEXT_LIMIT).entries()) {
      const sendChunk = webhook
        ? () => this.api.sendBySession(webhook, MARKDOWN_TITLE, chunk, at)
        : () => this.api.sendRobotMessage(chatId, markdown(chunk));
      await this.deps.delivery.deliver(this.key(id, i), sendChunk, classifyDingTalkError);
    }
    for (const [i, item] of (media ?? []).entries()) {
      const key = this.key(id, `media${i}`);
      if (this.deps.delivery.isDelivered(key)) continue;
      const plan = await planMedia(this.api, chatId, item);
      if ("unreadable" in plan) {
        this.log.warn("dingtalk attachment unreadable, sending a note instead", { file: plan.unreadable });
        await this.deps.delivery.deliver(key, () => this.api.sendRobotMessage(chatId, markdown(`[Attachment send failed: ${plan.unreadable}]`)), classifyDingTalkError);
        continue;
      }
      await this.deps.delivery.deliver(key, plan.send, classifyDingTalkError);
    }
  }
}
