/**
 * Discord through discord.js: the Gateway WebSocket for incoming messages (discord.js keeps the
 * heartbeat and resumes the session after a drop), REST for sends. Direct messages and server
 * channels (mention rules, `allowChannels`), attachments both ways, replies threaded to the
 * asking message, streamed replies by editing one message, typing and read-receipt reactions.
 * discord.js is loaded when the channel starts, so configs without Discord never load it.
 */
import { join } from "node:path";
import type { Client, Message } from "discord.js";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { LruSet } from "../delivery/lru-set.js";
import { splitMessage } from "../delivery/split-message.js";
import { StreamEditor } from "../delivery/stream-editor.js";
import { TypingKeeper } from "../delivery/typing-keeper.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import type { DiscordConfig } from "./config.js";
import { GatewaySupervisor } from "./gateway-supervisor.js";
import { toGateInput } from "./inbound.js";
import { DISCORD_TEXT_LIMIT, classifyDiscordError, editText, loadFile, postFile, postText, react, sendTyping } from "./send.js";

const DEFAULT_API_ROOT = "https://discord.com/api";

export interface DiscordChannelOptions extends ChannelDeps {
  config: DiscordConfig;
  name?: string;
}

interface OpenStream {
  editor: StreamEditor<string>;
}

/** The user's message that carries the read-receipt reaction until the reply goes out. */
interface PendingReaction {
  messageId: string;
  emojis: string[];
  cancelWorking: () => void;
}

export class DiscordChannel implements Channel {
  readonly name: string;
  private readonly config: DiscordConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private client: Client | undefined;
  private supervisor: GatewaySupervisor | undefined;
  private botId = "";
  private readonly streams = new Map<string, OpenStream>();
  /** Streams already finished: a late delta must not open a second preview. */
  private readonly ended = new LruSet(1_000);
  /** Ids of messages this bot sent: a reply to one of them addresses the bot. */
  private readonly own = new LruSet(5_000);
  private readonly reactions = new Map<string, PendingReaction>();
  private readonly typing: TypingKeeper;
  private connection: ChannelConnection = { connected: false };

  constructor(options: DiscordChannelOptions) {
    this.name = options.name ?? "discord";
    this.config = options.config;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
    // Discord shows "typing…" for 10 s.
    this.typing = new TypingKeeper({
      clock: options.clock,
      refreshMs: 8000,
      send: async (chatId) => {
        const client = this.client;
        if (!client) return;
        // Best effort: a lost typing indicator is not worth an error report.
        await sendTyping(client.rest, chatId).catch((error: unknown) => this.log.debug("typing failed", { error: errorMessage(error) }));
      },
    });
  }

  status(): ChannelConnection {
    return { ...this.connection };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.client) return;
    const sdk = await import("discord.js");
    const { Client, Events, Partials } = sdk;
    const supervisor = new GatewaySupervisor(this.deps.clock);
    this.supervisor = supervisor;
    const client = new Client({
      ws: { buildStrategy: supervisor.buildStrategy(sdk) },
      intents: this.config.intents,
      // Direct-message channels are not cached before their first message.
      partials: [Partials.Channel],
      rest: { api: (this.config.apiRoot ?? DEFAULT_API_ROOT).replace(/\/+$/, ""), retries: 0, rejectOnRateLimit: () => true },
    });
    client.on(Events.MessageCreate, (message) => {
      this.onMessage(message).catch((error: unknown) => this.log.error("discord message failed", { error: errorMessage(error) }));
    });
    client.on(Events.ShardReady, () => this.setConnected(true));
    client.on(Events.ShardResume, () => this.setConnected(true));
    client.on(Events.ShardReconnecting, () => this.setConnected(false, "gateway connection lost; reconnecting"));
    client.on(Events.ShardDisconnect, (event) => this.setConnected(false, `gateway closed (code ${event.code})`));
    client.on(Events.ShardError, (error) => this.setConnected(false, errorMessage(error)));
    client.on(Events.Error, (error) => this.setConnected(this.connection.connected, errorMessage(error)));
    this.client = client;
    const ready = new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(new Error("discord start aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
      client.once(Events.ClientReady, () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      });
    });
    try {
      await Promise.all([client.login(this.config.token), ready]);
    } catch (error) {
      this.connection = { connected: false, lastError: errorMessage(error) };
      throw error;
    }
    this.botId = client.user?.id ?? "";
    this.setConnected(true);
    this.log.info("discord connected", { bot: client.user?.username });
  }

  async stop(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = undefined;
    this.supervisor?.stop();
    this.supervisor = undefined;
    this.typing.stopAll();
    for (const pending of this.reactions.values()) pending.cancelWorking();
    this.reactions.clear();
    for (const stream of this.streams.values()) await stream.editor.finish();
    this.streams.clear();
    await client.destroy();
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
        const rest = this.rest();
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => postText(rest, message.chatId, message.text), classifyDiscordError);
        return;
      }
      case "typing":
        return this.typing.start(message.chatId);
    }
  }

  private setConnected(connected: boolean, lastError?: string): void {
    this.connection = { connected, ...(lastError ? { lastError } : this.connection.lastError ? { lastError: this.connection.lastError } : {}) };
    if (lastError) this.log.warn("discord gateway problem", { error: lastError });
  }

  private rest(): Client["rest"] {
    if (!this.client) throw new Error(`${this.name}: channel not started`);
    return this.client.rest;
  }

  private async onMessage(message: Message): Promise<void> {
    if (!this.botId) return;
    const input = await toGateInput(message, {
      channel: this.name,
      botId: this.botId,
      groupPolicy: this.config.groupPolicy,
      allowChannels: this.config.allowChannels,
      mediaDir: join(this.deps.home, "media", this.name),
      isOwnMessage: (id) => this.own.has(id),
      onDownloadError: (error) => this.log.warn("discord attachment download failed", { error: errorMessage(error) }),
    });
    if (!input) return;
    const rest = this.rest();
    const outcome = await this.deps.gate.receive(input, async (text) => {
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => postText(rest, input.chatId, text), classifyDiscordError);
    });
    if (outcome !== "forwarded") return;
    await this.acknowledge(input.chatId, message.id);
    void this.typing.start(input.chatId);
  }

  /** Read receipt at once, the working emoji after `workingEmojiDelay`; both go when the reply is sent. */
  private async acknowledge(chatId: string, messageId: string): Promise<void> {
    const { readReceiptEmoji, workingEmoji, workingEmojiDelay } = this.config;
    const rest = this.rest();
    const put = (emoji: string): Promise<void> =>
      react(rest, chatId, messageId, emoji, true).catch((error: unknown) => this.log.debug("reaction failed", { error: errorMessage(error) }));
    this.reactions.get(chatId)?.cancelWorking();
    const pending: PendingReaction = { messageId, emojis: [], cancelWorking: () => undefined };
    this.reactions.set(chatId, pending);
    if (readReceiptEmoji) {
      pending.emojis.push(readReceiptEmoji);
      await put(readReceiptEmoji);
    }
    if (workingEmoji) {
      pending.cancelWorking = this.deps.clock.setTimer(() => {
        pending.emojis.push(workingEmoji);
        void put(workingEmoji);
      }, workingEmojiDelay * 1000);
    }
  }

  private async replied(chatId: string): Promise<void> {
    this.typing.stop(chatId);
    const pending = this.reactions.get(chatId);
    if (!pending) return;
    this.reactions.delete(chatId);
    pending.cancelWorking();
    const rest = this.rest();
    for (const emoji of pending.emojis) {
      await react(rest, chatId, pending.messageId, emoji, false).catch((error: unknown) => this.log.debug("reaction removal failed", { error: errorMessage(error) }));
    }
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  private async post(chatId: string, content: string, replyTo?: string): Promise<string> {
    const id = await postText(this.rest(), chatId, content, replyTo ? { replyTo } : {});
    this.own.add(id);
    return id;
  }

  private async sendReply(chatId: string, id: string, content: string, media: MediaItem[] | undefined, replyTo: string | undefined): Promise<void> {
    const threadTo = replyTo && /^\d+$/.test(replyTo) ? replyTo : undefined;
    const chunks = splitMessage(content, DISCORD_TEXT_LIMIT);
    for (const [i, chunk] of chunks.entries()) {
      await this.deps.delivery.deliver(this.key(id, i), () => this.post(chatId, chunk, i === 0 ? threadTo : undefined), classifyDiscordError);
    }
    for (const [i, item] of (media ?? []).entries()) {
      const key = this.key(id, `media${i}`);
      if (this.deps.delivery.isDelivered(key)) continue;
      const file = await loadFile(item);
      const label = item.name ?? item.path ?? item.url ?? "file";
      if (!file) {
        this.log.warn("discord attachment unreadable, sending a note instead", { file: label });
        await this.deps.delivery.deliver(key, () => this.post(chatId, `[attachment: ${label} - send failed]`), classifyDiscordError);
        continue;
      }
      const rest = this.rest();
      await this.deps.delivery.deliver(key, () => postFile(rest, chatId, file, chunks.length === 0 && i === 0 && threadTo ? { replyTo: threadTo } : {}), classifyDiscordError);
    }
  }

  private onDelta(streamId: string, chatId: string, delta: string, replyTo: string | undefined): void {
    if (!this.config.streaming || this.ended.has(streamId)) return;
    let stream = this.streams.get(streamId);
    if (!stream) {
      this.typing.stop(chatId);
      const editor = new StreamEditor<string>(
        {
          // The preview answers the asking message, as the final reply would.
          post: (text) => this.post(chatId, text, replyTo && /^\d+$/.test(replyTo) ? replyTo : undefined),
          edit: (ref, text) => editText(this.rest(), chatId, ref, text),
        },
        { intervalMs: this.config.streamEditIntervalMs, clock: this.deps.clock, previewLimit: DISCORD_TEXT_LIMIT, logger: this.log },
      );
      stream = { editor };
      this.streams.set(streamId, stream);
    }
    stream.editor.push(delta);
  }

  /** Turns the preview into the final text; further chunks follow as new messages. */
  private async onStreamEnd(streamId: string, chatId: string, id: string, content: string, replyTo: string | undefined): Promise<void> {
    const stream = this.streams.get(streamId);
    this.streams.delete(streamId);
    this.ended.add(streamId);
    const ref = stream ? (await stream.editor.finish()).ref : undefined;
    if (ref === undefined) return this.sendReply(chatId, id, content, undefined, replyTo);
    const rest = this.rest();
    if (this.deps.delivery.isDelivered(this.key(id, 0))) {
      // A resumed turn re-streamed a reply that was already delivered: remove the extra preview.
      await rest.delete(`/channels/${chatId}/messages/${ref}`).catch(() => undefined);
      return;
    }
    for (const [i, chunk] of splitMessage(content, DISCORD_TEXT_LIMIT).entries()) {
      const send = async (): Promise<void> => {
        if (i === 0) await editText(rest, chatId, ref, chunk);
        else await this.post(chatId, chunk);
      };
      await this.deps.delivery.deliver(this.key(id, i), send, classifyDiscordError);
    }
  }
}
