/**
 * WeCom (企业微信) AI bot over its long-connection WebSocket, through the official
 * `@wecom/aibot-node-sdk`: the SDK subscribes with the bot id and secret, keeps the heartbeat,
 * reconnects, and downloads and decrypts files. A reply answers the asking message's frame as a
 * finished stream message (as the Python nanobot); a chat with no message to answer (a cron
 * push) gets a proactive Markdown message. Files are uploaded over the socket in chunks.
 */
import { readFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { WSClient, WsFrame, WsFrameHeaders } from "@wecom/aibot-node-sdk";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { RetryDecision } from "../delivery/delivery-queue.js";
import { splitMessage } from "../delivery/split-message.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import type { WecomConfig } from "./config.js";
import { chatOf, isGroup, senderOf, toGateInput } from "./inbound.js";
import type { WecomMessage } from "./inbound.js";

/** WeCom's limit is 20480 bytes of UTF-8 per message; 6000 characters fit whatever the script. */
export const WECOM_TEXT_LIMIT = 6000;

/** A refused command: WeCom's errcode and errmsg from the acknowledgement frame. */
export class WecomSendError extends Error {
  readonly errcode: number;
  constructor(what: string, errcode: number, errmsg: string) {
    super(`WeCom ${what} failed: errcode ${errcode}${errmsg ? ` (${errmsg})` : ""}`);
    this.name = "WecomSendError";
    this.errcode = errcode;
  }
}

/** -1 (system busy) and 45009 (frequency limit) are worth a retry, as are timeouts and a lost socket. */
export function classifyWecomError(error: unknown): RetryDecision {
  if (error instanceof WecomSendError) return { retryable: error.errcode === -1 || error.errcode === 45009 || error.errcode >= 500 && error.errcode < 600 };
  return { retryable: true };
}

/** The SDK rejects with the acknowledgement frame itself; give it a message and a code. */
async function command<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (typeof error === "object" && error !== null && "errcode" in error) {
      const frame = error as { errcode?: unknown; errmsg?: unknown };
      throw new WecomSendError(what, Number(frame.errcode), String(frame.errmsg ?? ""));
    }
    throw error;
  }
}

type MediaType = "image" | "file" | "voice" | "video";

function mediaTypeOf(name: string): MediaType {
  if (/\.(jpe?g|png|gif|webp|bmp)$/i.test(name)) return "image";
  if (/\.(mp4|avi|mov)$/i.test(name)) return "video";
  if (/\.(amr|mp3|wav|ogg)$/i.test(name)) return "voice";
  return "file";
}

export interface WecomChannelOptions extends ChannelDeps {
  config: WecomConfig;
  name?: string;
}

const REMEMBERED_FRAMES = 1_000;

export class WecomChannel implements Channel {
  readonly name: string;
  private readonly config: WecomConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private client: WSClient | undefined;
  private connected = false;
  private lastError: string | undefined;
  /** The frame of each message, to answer it; and the last frame of each chat (the Python nanobot's default). */
  private readonly frames = new Map<string, WsFrameHeaders>();
  private readonly lastFrame = new Map<string, WsFrameHeaders>();
  private queue: Promise<void> = Promise.resolve();
  private streamSeq = 0;

  constructor(options: WecomChannelOptions) {
    this.name = options.name ?? "wecom";
    this.config = options.config;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
  }

  status(): ChannelConnection {
    return { connected: this.connected && this.client?.isConnected === true, ...(this.lastError ? { lastError: this.lastError } : {}) };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.client) return;
    const { WSClient } = await import("@wecom/aibot-node-sdk");
    const log = this.log;
    const client = new WSClient({
      botId: this.config.botId,
      secret: this.config.secret,
      wsUrl: this.config.wsUrl,
      reconnectInterval: 1000,
      // Keep reconnecting for as long as the gateway runs, as the Python nanobot does.
      maxReconnectAttempts: -1,
      heartbeatInterval: 30_000,
      logger: {
        debug: (message: string) => log.debug(message),
        info: (message: string) => log.debug(message),
        warn: (message: string) => log.debug(message),
        error: (message: string) => log.debug(message),
      },
    });
    this.client = client;
    client.on("authenticated", () => {
      this.connected = true;
    });
    client.on("disconnected", (reason: string) => {
      this.connected = false;
      this.lastError = `connection closed: ${reason}`;
      log.warn("wecom connection lost; reconnecting", { reason });
    });
    client.on("error", (error: Error) => {
      this.lastError = errorMessage(error);
    });
    client.on("message", (frame: WsFrame) => this.onFrame(frame));
    client.on("event.enter_chat", (frame: WsFrame) => {
      this.welcome(frame).catch((error: unknown) => log.warn("wecom welcome message failed", { error: errorMessage(error) }));
    });
    try {
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void => reject(new Error("wecom start aborted"));
        signal.addEventListener("abort", onAbort, { once: true });
        const onError = (error: Error): void => {
          // Only a refused subscription fails the start; a socket error is retried by the SDK.
          if (/Authentication failed/.test(error.message)) reject(error);
        };
        client.on("error", onError);
        client.once("authenticated", () => {
          signal.removeEventListener("abort", onAbort);
          client.off("error", onError);
          resolve();
        });
        client.connect();
      });
    } catch (error) {
      this.lastError = errorMessage(error);
      this.client = undefined;
      client.disconnect();
      throw error;
    }
    log.info("wecom connected", { botId: this.config.botId });
  }

  async stop(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = undefined;
    this.connected = false;
    client.disconnect();
    await this.queue;
  }

  async send(message: OutboundMessage): Promise<void> {
    switch (message.kind) {
      case "message":
        return this.sendReply(message.chatId, message.id, message.content, message.media, message.replyTo);
      case "delta":
        // Sent whole with stream_end, as the Python nanobot does.
        return;
      case "stream_end":
        return this.sendReply(message.chatId, message.id, message.content, undefined, message.replyTo);
      case "progress": {
        if (!this.config.sendProgress) return;
        const text = message.text;
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => this.sendText(message.chatId, text, undefined), classifyWecomError);
        return;
      }
      case "typing":
        // WeCom shows bots no typing indicator.
        return;
    }
  }

  private requireClient(): WSClient {
    if (!this.client) throw new Error(`${this.name}: channel not started`);
    return this.client;
  }

  private onFrame(frame: WsFrame): void {
    const body = frame.body as WecomMessage | undefined;
    if (!body) return;
    this.queue = this.queue
      .then(() => this.onMessage(frame, body))
      .catch((error: unknown) => this.log.error("wecom message failed", { error: errorMessage(error) }));
  }

  private remember(msgId: string, chatId: string, frame: WsFrameHeaders): void {
    this.frames.set(msgId, frame);
    if (this.frames.size > REMEMBERED_FRAMES) this.frames.delete(this.frames.keys().next().value!);
    this.lastFrame.set(chatId, frame);
  }

  private async onMessage(frame: WsFrame, body: WecomMessage): Promise<void> {
    const client = this.client;
    if (!client) return;
    const input = await toGateInput(body, {
      groupPolicy: this.config.groupPolicy,
      mediaDir: join(this.deps.home, "media", this.name),
      download: (url, aeskey) => client.downloadFile(url, aeskey),
      onDownloadError: (error) => this.log.warn("wecom file download failed", { error: errorMessage(error) }),
    });
    if (!input) return;
    this.remember(input.id, input.chatId, frame);
    await this.deps.gate.receive(input, async (text) => {
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => this.sendText(input.chatId, text, frame), classifyWecomError);
    });
  }

  /** WeCom's enter_chat event: the welcome message for an allowed user opening the direct chat. */
  private async welcome(frame: WsFrame): Promise<void> {
    const text = this.config.welcomeMessage;
    const body = frame.body as WecomMessage | undefined;
    if (!text || !body) return;
    const user = senderOf(body);
    const allowed = this.config.allowFrom.includes("*") || this.config.allowFrom.includes(user) || this.config.allowFrom.includes(chatOf(body));
    if (!allowed || isGroup(body)) return;
    const client = this.requireClient();
    await command("welcome message", () => client.replyWelcome(frame, { msgtype: "text", text: { content: text } }));
  }

  private async sendText(chatId: string, text: string, frame: WsFrameHeaders | undefined): Promise<void> {
    const client = this.requireClient();
    if (frame) {
      const streamId = `nanobot-${Date.now().toString(36)}-${++this.streamSeq}`;
      await command("reply", () => client.replyStream(frame, streamId, text, true));
      return;
    }
    // Without a message to answer (a cron push), WeCom takes only a proactive Markdown message.
    await command("proactive send", () => client.sendMessage(chatId, { msgtype: "markdown", markdown: { content: text } }));
  }

  private frameFor(chatId: string, replyTo: string | undefined): WsFrameHeaders | undefined {
    return (replyTo ? this.frames.get(replyTo) : undefined) ?? this.lastFrame.get(chatId);
  }

  private async sendReply(chatId: string, id: string, content: string, media: MediaItem[] | undefined, replyTo: string | undefined): Promise<void> {
    const frame = this.frameFor(chatId, replyTo);
    for (const [i, item] of (media ?? []).entries()) {
      const key = `${this.name}:${id}#media${i}`;
      if (this.deps.delivery.isDelivered(key)) continue;
      const label = item.name ?? item.path ?? item.url ?? "file";
      let data: Buffer | undefined;
      try {
        data = item.path ? await readFile(item.path) : undefined;
      } catch {
        data = undefined;
      }
      if (!data) {
        this.log.warn("wecom attachment unreadable, sending a note instead", { file: label });
        await this.deps.delivery.deliver(key, () => this.sendText(chatId, `[file upload failed: ${label}]`, frame), classifyWecomError);
        continue;
      }
      const file = data;
      const name = item.name ?? basename(item.path!);
      const type = mediaTypeOf(name);
      await this.deps.delivery.deliver(
        key,
        async () => {
          const client = this.requireClient();
          const uploaded = await command("upload", () => client.uploadMedia(file, { type, filename: name }));
          await command("media send", () => (frame ? client.replyMedia(frame, type, uploaded.media_id) : client.sendMediaMessage(chatId, type, uploaded.media_id)));
        },
        classifyWecomError,
      );
    }
    for (const [i, chunk] of splitMessage(content.trim(), WECOM_TEXT_LIMIT).entries()) {
      await this.deps.delivery.deliver(`${this.name}:${id}#${i}`, () => this.sendText(chatId, chunk, frame), classifyWecomError);
    }
  }
}
