/**
 * Feishu / Lark through the official SDK (@larksuiteoapi/node-sdk): the long connection
 * (`WSClient`, protobuf frames over a WebSocket; no public URL needed) for incoming events, the
 * Open Platform REST API for sends. Direct messages and groups (mention rules, topics),
 * pictures and files both ways, replies quoting the asking message (`replyToMessage`), streamed
 * replies by updating one card, and a reaction on the asking message while the bot works
 * (Feishu has no typing indicator). The SDK is loaded when the channel starts, so configs
 * without Feishu never load it.
 */
import { join } from "node:path";
import type { Client, WSClient } from "@larksuiteoapi/node-sdk";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { LruSet } from "../delivery/lru-set.js";
import { splitMessage } from "../delivery/split-message.js";
import { StreamEditor } from "../delivery/stream-editor.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import { feishuBaseUrl } from "./config.js";
import type { FeishuConfig } from "./config.js";
import { FEISHU_TEXT_LIMIT, cardContent, formatReply } from "./format.js";
import { toGateInput } from "./inbound.js";
import type { FeishuMessageEvent, FeishuResource } from "./inbound.js";
import { addReaction, classifyFeishuError, downloadResource, removeReaction, sendMessage, patchCard, uploadMedia } from "./send.js";
import type { SendTarget } from "./send.js";

/**
 * The SDK gives up on the long connection for good when the endpoint refuses it (anything but
 * "internal error") or the platform's reconnect count runs out; the channel then starts it
 * afresh after this pause (on the channel clock), for as long as it runs.
 */
export const RESTART_DELAY_MS = 60_000;

/** How long `stop` waits for the event being handled. */
const STOP_WAIT_MS = 5_000;

export interface FeishuChannelOptions extends ChannelDeps {
  config: FeishuConfig;
  name?: string;
}

/** The user's message that carries the `reactEmoji` reaction until the reply goes out. */
interface PendingReaction {
  messageId: string;
  /** Settles once the platform answered the reaction (undefined when it failed). */
  reactionId: Promise<string | undefined>;
}

/** Events the bot is subscribed to but has nothing to do with (registered so the SDK does not warn). */
const IGNORED_EVENTS = [
  "im.message.reaction.created_v1",
  "im.message.reaction.deleted_v1",
  "im.message.message_read_v1",
  "im.chat.access_event.bot_p2p_chat_entered_v1",
  "im.chat.member.bot.added_v1",
  "im.chat.member.bot.deleted_v1",
];

export class FeishuChannel implements Channel {
  readonly name: string;
  private readonly config: FeishuConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private client: Client | undefined;
  private ws: WSClient | undefined;
  private botOpenId = "";
  private readonly streams = new Map<string, StreamEditor<string>>();
  /** Streams already finished: a late delta must not open a second preview. */
  private readonly ended = new LruSet(1_000);
  /** Ids of messages this bot sent: a reply to one of them addresses the bot. */
  private readonly own = new LruSet(5_000);
  /** Asking messages inside a topic: every part of the answer stays in the topic. */
  private readonly topics = new LruSet(5_000);
  private readonly reactions = new Map<string, PendingReaction>();
  /** Events are handled one after another, in the order the platform pushed them. */
  private inbound: Promise<void> = Promise.resolve();
  private connection: ChannelConnection = { connected: false };
  private cancelRestart: (() => void) | undefined;

  constructor(options: FeishuChannelOptions) {
    this.name = options.name ?? "feishu";
    this.config = options.config;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
  }

  status(): ChannelConnection {
    return { ...this.connection };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.client) return;
    const lark = await import("@larksuiteoapi/node-sdk");
    const domain = feishuBaseUrl(this.config);
    const logger = this.sdkLogger();
    const common = { appId: this.config.appId, appSecret: this.config.appSecret, domain, logger, loggerLevel: lark.LoggerLevel.info };
    // Each channel keeps its own token cache: the SDK's shared one would hand a token of one
    // server (or app secret) to another.
    const client = new lark.Client({ ...common, cache: new lark.DefaultCache() });
    this.client = client;
    const dispatcher = new lark.EventDispatcher({ encryptKey: this.config.encryptKey, verificationToken: this.config.verificationToken, logger, loggerLevel: lark.LoggerLevel.info });
    const handlers: Record<string, (data: unknown) => Promise<void>> = {
      "im.message.receive_v1": (data) => {
        // Answer the frame at once (Feishu re-sends events not acknowledged within 3 s).
        this.inbound = this.inbound.then(() => this.onMessage(data as FeishuMessageEvent)).catch((error: unknown) => this.log.error("feishu message failed", { error: errorMessage(error) }));
        return Promise.resolve();
      },
    };
    for (const event of IGNORED_EVENTS) handlers[event] = () => Promise.resolve();
    dispatcher.register(handlers);

    this.botOpenId = await this.fetchBotOpenId(client);
    let settle: ((error?: Error) => void) | undefined;
    const ready = new Promise<void>((resolve, reject) => {
      settle = (error) => (error ? reject(error) : resolve());
    });
    const onAbort = (): void => settle?.(new Error("feishu start aborted"));
    signal.addEventListener("abort", onAbort, { once: true });
    const ws = new lark.WSClient({
      ...common,
      autoReconnect: true,
      onReady: () => {
        this.setConnected(true);
        settle?.();
      },
      onReconnecting: () => this.setConnected(false, "long connection lost; reconnecting"),
      onReconnected: () => this.setConnected(true),
      onError: (error: Error) => {
        this.setConnected(false, errorMessage(error));
        if (settle) settle(error);
        else this.scheduleRestart(ws, dispatcher);
      },
    });
    this.ws = ws;
    try {
      await ws.start({ eventDispatcher: dispatcher });
      await ready;
      settle = undefined;
    } catch (error) {
      this.connection = { connected: false, lastError: errorMessage(error) };
      await this.stop();
      throw error;
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
    this.log.info("feishu connected", { botOpenId: this.botOpenId || undefined });
  }

  async stop(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = undefined;
    this.cancelRestart?.();
    this.cancelRestart = undefined;
    this.ws?.close({ force: true });
    this.ws = undefined;
    for (const editor of this.streams.values()) await editor.finish();
    this.streams.clear();
    this.reactions.clear();
    // Let the event in hand finish (it may be writing a download), but not wait on a hung request.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.inbound, new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS).unref()))]);
    clearTimeout(timer);
    this.connection = { ...this.connection, connected: false };
  }

  async send(message: OutboundMessage): Promise<void> {
    switch (message.kind) {
      case "message":
        await this.sendReply(message.chatId, message.id, message.content, message.media, message.replyTo);
        return this.replied(message.chatId);
      case "delta":
        return this.onDelta(message.streamId, message.chatId, message.delta, message.replyTo);
      case "stream_end":
        await this.onStreamEnd(message.streamId, message.chatId, message.id, message.content, message.replyTo);
        return this.replied(message.chatId);
      case "progress": {
        if (!this.config.sendProgress) return;
        const client = this.api();
        // Each line of a tool hint gets the prefix (as the Python nanobot's tool hints).
        const prefix = message.toolName ? this.config.toolHintPrefix : "";
        const text = prefix ? message.text.split("\n").filter((line) => line.trim()).map((line) => `${prefix} ${line}`).join("\n") : message.text;
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => sendMessage(client, { chatId: message.chatId }, "text", JSON.stringify({ text })), classifyFeishuError);
        return;
      }
      case "typing":
        // Feishu has no typing indicator; the `reactEmoji` reaction shows the bot is at work.
        return;
    }
  }

  private scheduleRestart(ws: WSClient, dispatcher: Parameters<WSClient["start"]>[0]["eventDispatcher"]): void {
    if (this.ws !== ws || this.cancelRestart) return;
    this.log.warn("feishu long connection given up by the SDK; starting it again later", { afterMs: RESTART_DELAY_MS });
    this.cancelRestart = this.deps.clock.setTimer(() => {
      this.cancelRestart = undefined;
      if (this.ws !== ws) return;
      ws.start({ eventDispatcher: dispatcher }).catch((error: unknown) => this.setConnected(false, errorMessage(error)));
    }, RESTART_DELAY_MS);
  }

  private setConnected(connected: boolean, lastError?: string): void {
    this.connection = { connected, ...(lastError ? { lastError } : this.connection.lastError ? { lastError: this.connection.lastError } : {}) };
    if (lastError) this.log.warn("feishu long connection problem", { error: lastError });
  }

  private api(): Client {
    if (!this.client) throw new Error(`${this.name}: channel not started`);
    return this.client;
  }

  /** The SDK's log lines, without its request objects (they carry the access token). */
  private sdkLogger(): { error: (...a: unknown[]) => void; warn: (...a: unknown[]) => void; info: (...a: unknown[]) => void; debug: (...a: unknown[]) => void; trace: (...a: unknown[]) => void } {
    const text = (args: unknown[]): string =>
      args
        .flat()
        .map((a) => (typeof a === "string" ? a : a instanceof Error ? a.message : ""))
        .filter(Boolean)
        .join(" ");
    const debug = (...args: unknown[]): void => this.log.debug("feishu sdk", { message: text(args) });
    return { error: (...args) => this.log.warn("feishu sdk", { message: text(args) }), warn: debug, info: debug, debug, trace: () => undefined };
  }

  /** The bot's open_id tells its @mentions from others'; without it a heuristic is used (as the Python nanobot). */
  private async fetchBotOpenId(client: Client): Promise<string> {
    try {
      const body = (await client.request({ method: "GET", url: "/open-apis/bot/v3/info" })) as { code?: number; msg?: string; bot?: { open_id?: string } };
      if (body?.code === 0 && body.bot?.open_id) return body.bot.open_id;
      this.log.warn("feishu bot info unavailable; @mention matching uses a heuristic", { code: body?.code, msg: body?.msg });
    } catch (error) {
      this.log.warn("feishu bot info unavailable; @mention matching uses a heuristic", { error: errorMessage(error) });
    }
    return "";
  }

  private async onMessage(event: FeishuMessageEvent): Promise<void> {
    const client = this.client;
    if (!client) return;
    const input = await toGateInput(event, {
      channel: this.name,
      botOpenId: this.botOpenId,
      groupPolicy: this.config.groupPolicy,
      topicIsolation: this.config.topicIsolation,
      isOwnMessage: (id) => this.own.has(id),
      download: (messageId, resources) => this.download(client, messageId, resources),
    });
    if (!input) return;
    const messageId = String(input.metadata?.messageId);
    // Known before the agent can answer: the answer to a topic message stays in the topic.
    if (input.metadata?.threadId) this.topics.add(messageId);
    // The reaction's place is taken before the gate forwards, so an answer that comes at once
    // still finds (and removes) it.
    let forwarded: (yes: boolean) => void = () => undefined;
    this.acknowledge(input.chatId, messageId, new Promise<boolean>((resolve) => (forwarded = resolve)));
    let outcome = "dropped";
    try {
      outcome = await this.deps.gate.receive(input, async (text) => {
        await this.deps.delivery.withRetries(`${this.name}:pairing`, () => sendMessage(client, { chatId: input.chatId }, "text", JSON.stringify({ text })), classifyFeishuError);
      });
    } finally {
      forwarded(outcome === "forwarded");
    }
    await this.reactions.get(input.chatId)?.reactionId;
  }

  private async download(client: Client, messageId: string, resources: FeishuResource[]): Promise<MediaItem[]> {
    const dir = join(this.deps.home, "media", this.name);
    const out: MediaItem[] = [];
    for (const resource of resources) {
      try {
        out.push(await downloadResource(client, messageId, resource, dir));
      } catch (error) {
        this.log.warn("feishu resource download failed", { messageId, error: errorMessage(error) });
      }
    }
    return out;
  }

  /** The `reactEmoji` reaction on the asking message once it is forwarded; it goes when the reply is sent. */
  private acknowledge(chatId: string, messageId: string, forwarded: Promise<boolean>): void {
    const emoji = this.config.reactEmoji;
    const client = this.client;
    if (!emoji || !client) return;
    const previous = this.reactions.get(chatId);
    const reactionId = forwarded.then(async (yes) => {
      if (!yes) {
        // Not for the agent (another sender not let in, a duplicate): the earlier message keeps its place.
        if (this.reactions.get(chatId)?.messageId === messageId) {
          if (previous) this.reactions.set(chatId, previous);
          else this.reactions.delete(chatId);
        }
        return undefined;
      }
      return addReaction(client, messageId, emoji).catch((error: unknown) => {
        this.log.debug("reaction failed", { error: errorMessage(error) });
        return undefined;
      });
    });
    this.reactions.set(chatId, { messageId, reactionId });
  }

  private async replied(chatId: string): Promise<void> {
    const pending = this.reactions.get(chatId);
    if (!pending) return;
    this.reactions.delete(chatId);
    const client = this.api();
    const reactionId = await pending.reactionId;
    if (reactionId) {
      await removeReaction(client, pending.messageId, reactionId).catch((error: unknown) => this.log.debug("reaction removal failed", { error: errorMessage(error) }));
    }
    if (this.config.doneEmoji) {
      await addReaction(client, pending.messageId, this.config.doneEmoji).catch((error: unknown) => this.log.debug("reaction failed", { error: errorMessage(error) }));
    }
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  /**
   * Where part `index` of a reply goes: quoting the asking message when `replyToMessage` is on
   * (the first part only) or when the asking message is in a topic (every part, so the answer
   * stays in the topic).
   */
  private target(chatId: string, replyTo: string | undefined, index: number): SendTarget {
    if (!replyTo || !/^om_/.test(replyTo)) return { chatId };
    const inTopic = this.topics.has(replyTo);
    if (!inTopic && !(this.config.replyToMessage && index === 0)) return { chatId };
    return { chatId, replyTo, replyInThread: this.config.replyToMessage && chatId.startsWith("oc_") };
  }

  private async post(target: SendTarget, msgType: string, content: string): Promise<string> {
    const id = await sendMessage(this.api(), target, msgType, content);
    this.own.add(id);
    return id;
  }

  private async sendReply(chatId: string, id: string, content: string, media: MediaItem[] | undefined, replyTo: string | undefined): Promise<void> {
    const chunks = content.trim() ? splitMessage(content, FEISHU_TEXT_LIMIT) : [];
    for (const [i, chunk] of chunks.entries()) {
      const { msgType, content: body } = formatReply(chunk);
      await this.deps.delivery.deliver(this.key(id, i), () => this.post(this.target(chatId, replyTo, i), msgType, body), classifyFeishuError);
    }
    for (const [i, item] of (media ?? []).entries()) {
      const key = this.key(id, `media${i}`);
      if (this.deps.delivery.isDelivered(key)) continue;
      const label = item.name ?? item.path ?? item.url ?? "file";
      const target = this.target(chatId, replyTo, chunks.length + i);
      const send = async (): Promise<string> => {
        const uploaded = await uploadMedia(this.api(), item);
        if (uploaded) return this.post(target, uploaded.msgType, uploaded.content);
        this.log.warn("feishu attachment unreadable or too large, sending a note instead", { file: label });
        return this.post(target, "text", JSON.stringify({ text: `[attachment: ${label} - send failed]` }));
      };
      await this.deps.delivery.deliver(key, send, classifyFeishuError);
    }
  }

  private onDelta(streamId: string, chatId: string, delta: string, replyTo: string | undefined): void {
    if (!this.config.streaming || this.ended.has(streamId)) return;
    let editor = this.streams.get(streamId);
    if (!editor) {
      editor = new StreamEditor<string>(
        {
          // Previews are cards: the only message kind Feishu lets the bot update.
          // Where the reply's first part would go: quoting the asking message, or in its topic.
          post: (text) => this.post(this.target(chatId, replyTo, 0), "interactive", cardContent(text)),
          edit: (ref, text) => patchCard(this.api(), ref, cardContent(text)),
        },
        { intervalMs: this.config.streamEditIntervalMs, clock: this.deps.clock, previewLimit: FEISHU_TEXT_LIMIT, logger: this.log },
      );
      this.streams.set(streamId, editor);
    }
    editor.push(delta);
  }

  /** Turns the preview card into the final text; further chunks follow as new messages. */
  private async onStreamEnd(streamId: string, chatId: string, id: string, content: string, replyTo: string | undefined): Promise<void> {
    const editor = this.streams.get(streamId);
    this.streams.delete(streamId);
    this.ended.add(streamId);
    const ref = editor ? (await editor.finish()).ref : undefined;
    if (ref === undefined) return this.sendReply(chatId, id, content, undefined, replyTo);
    const client = this.api();
    if (this.deps.delivery.isDelivered(this.key(id, 0))) {
      // A resumed turn re-streamed a reply that was already delivered: remove the extra preview.
      await client.im.v1.message.delete({ path: { message_id: ref } }).catch(() => undefined);
      return;
    }
    for (const [i, chunk] of splitMessage(content, FEISHU_TEXT_LIMIT).entries()) {
      const send = async (): Promise<void> => {
        if (i === 0) await patchCard(client, ref, cardContent(chunk));
        else {
          const { msgType, content: body } = formatReply(chunk);
          await this.post(this.target(chatId, replyTo, i), msgType, body);
        }
      };
      await this.deps.delivery.deliver(this.key(id, i), send, classifyFeishuError);
    }
  }
}
