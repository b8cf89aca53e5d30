/**
 * Slack through its maintained SDKs: @slack/web-api for every call, and events either over
 * Socket Mode (@slack/socket-mode: `apps.connections.open`, then a WebSocket whose envelopes are
 * acknowledged; the SDK reconnects itself) or over the Events API (Slack POSTs to `webhookPath`
 * on the gateway's HTTP server; see events-api.ts). Direct messages and channels (mention,
 * open or allowlist policy), files both ways, replies in threads, streamed replies by
 * chat.update, Markdown rendered as mrkdwn, and the Python nanobot's reaction receipts
 * (`reactEmoji` while working, `doneEmoji` once answered). Slack has no typing indicator for
 * bot messages; the reaction stands in for it. The SDKs load when the channel starts.
 */
import type { Server } from "node:http";
import { join } from "node:path";
import type { WebClient } from "@slack/web-api";
import type { SocketModeClient } from "@slack/socket-mode";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import type { InboundGate } from "../access/inbound-gate.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { LruSet } from "../delivery/lru-set.js";
import { splitMessage } from "../delivery/split-message.js";
import { StreamEditor } from "../delivery/stream-editor.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import { DEFAULT_SLACK_API_ROOT } from "./config.js";
import type { SlackConfig } from "./config.js";
import { EventsApiReceiver } from "./events-api.js";
import { narrowEvent, toSlackInbound } from "./inbound.js";
import type { SlackInbound } from "./inbound.js";
import { toMrkdwn } from "./mrkdwn.js";
import { slackSdkLogger } from "./sdk-logger.js";
import { SLACK_TEXT_LIMIT, classifySlackError, deleteMessage, editText, loadFile, postText, react, threadMessages, uploadFile } from "./send.js";
import { threadContext } from "./thread-context.js";

export interface SlackChannelOptions extends ChannelDeps {
  config: SlackConfig;
  name?: string;
  /** Admits `dm.allowFrom` senders in direct messages (`dm.policy: "allowlist"`). */
  dmGate?: InboundGate;
  /** The gateway's HTTP server: mode "http" receives the Events API on it. */
  server?: Server;
}

/** A message being answered: where its streamed reply goes and which message wears the reaction. */
interface Answering {
  ts: string;
  threadTs?: string;
  reacted: boolean;
}

/** Remembered threads (message ts → the thread its answer goes in); old entries are dropped. */
const THREAD_MEMORY = 5_000;
/** Messages waiting for their answer (a stopped turn never answers); the oldest are dropped. */
const ANSWERING_MEMORY = 1_000;

export class SlackChannel implements Channel {
  readonly name: string;
  private readonly config: SlackConfig;
  private readonly deps: SlackChannelOptions;
  private readonly log: Logger;
  private web: WebClient | undefined;
  private socket: SocketModeClient | undefined;
  private receiver: EventsApiReceiver | undefined;
  private botId = "";
  private connection: ChannelConnection = { connected: false };
  private readonly streams = new Map<string, StreamEditor<string>>();
  private readonly ended = new LruSet(1_000);
  /** `chat:ts` of messages this bot sent: a reply in their thread addresses the bot. */
  private readonly own = new LruSet(5_000);
  private readonly threads = new Map<string, string | null>();
  /** `chat:ts` → the message being answered; several threads of a channel can be answered at once. */
  private readonly answering = new Map<string, Answering>();
  /** Per chat, the ts of the message forwarded last (for outbound messages that name none). */
  private readonly lastAsked = new Map<string, string>();
  /** Threads whose earlier messages were already handed to the model. */
  private readonly contextGiven = new LruSet(10_000);

  constructor(options: SlackChannelOptions) {
    this.name = options.name ?? "slack";
    this.config = options.config;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
  }

  status(): ChannelConnection {
    return { ...this.connection };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.web) return;
    const { WebClient } = await import("@slack/web-api");
    const sdkLogger = slackSdkLogger(this.log);
    const slackApiUrl = withSlash(this.config.apiRoot ?? DEFAULT_SLACK_API_ROOT);
    // Retries are the delivery queue's (sendMaxRetries); the SDK's own would hide failures for minutes.
    const web = new WebClient(this.config.botToken, { slackApiUrl, logger: sdkLogger, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
    try {
      const auth = await web.auth.test();
      this.botId = auth.user_id ?? "";
    } catch (error) {
      const message = `channels.${this.name}.botToken: Slack refused auth.test (${errorMessage(error)})`;
      this.connection = { connected: false, lastError: message };
      throw new Error(message, { cause: error });
    }
    this.web = web;
    try {
      if (this.config.mode === "socket") await this.startSocket(slackApiUrl, signal);
      else this.startEventsApi();
    } catch (error) {
      this.web = undefined;
      this.connection = { connected: false, lastError: errorMessage(error) };
      throw error;
    }
    this.log.info("slack connected", { bot: this.botId, mode: this.config.mode });
  }

  private async startSocket(slackApiUrl: string, signal: AbortSignal): Promise<void> {
    const { SocketModeClient } = await import("@slack/socket-mode");
    const socket = new SocketModeClient({ appToken: this.config.appToken ?? "", logger: slackSdkLogger(this.log), clientOptions: { slackApiUrl } });
    socket.on("slack_event", (envelope: { ack: () => Promise<void>; type: string; body?: { event?: Record<string, unknown> } }) => {
      // Acknowledge first: Slack redelivers an envelope that is not acknowledged within 3 s.
      envelope.ack().catch((error: unknown) => this.log.debug("slack ack failed", { error: errorMessage(error) }));
      if (envelope.type === "events_api" && envelope.body?.event) this.onEvent(envelope.body.event);
    });
    socket.on("connected", () => this.setConnected(true));
    socket.on("reconnecting", () => this.setConnected(false, "socket mode connection lost; reconnecting"));
    socket.on("disconnected", () => this.setConnected(false));
    socket.on("error", (error: unknown) => this.setConnected(this.connection.connected, errorMessage(error)));
    this.socket = socket;
    const aborted = new Promise<never>((_resolve, reject) => {
      const onAbort = (): void => reject(new Error("slack start aborted"));
      if (signal.aborted) onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      await Promise.race([socket.start(), aborted]);
    } catch (error) {
      this.socket = undefined;
      await socket.disconnect().catch(() => undefined);
      throw new Error(`channels.${this.name}.appToken: Socket Mode did not connect (${errorMessage(error)})`, { cause: error });
    }
    this.setConnected(true);
  }

  private startEventsApi(): void {
    const server = this.deps.server;
    if (!server) throw new Error(`channels.${this.name}.mode "http" needs the gateway's HTTP server (run \`nanobot gateway\`), or use mode "socket"`);
    this.receiver = new EventsApiReceiver({
      server,
      path: this.config.webhookPath,
      signingSecret: this.config.signingSecret ?? "",
      clock: this.deps.clock,
      logger: this.log,
      ...(this.deps.dedup ? { dedup: this.deps.dedup } : {}),
      dedupScope: this.name,
      onEvent: (event) => this.onEvent(event),
    });
    this.receiver.start();
    // Nothing to stay connected to: Slack posts when it has something.
    this.setConnected(true);
  }

  async stop(): Promise<void> {
    if (!this.web) return;
    this.receiver?.stop();
    this.receiver = undefined;
    for (const editor of this.streams.values()) await editor.finish();
    this.streams.clear();
    const socket = this.socket;
    this.socket = undefined;
    if (socket) await socket.disconnect().catch((error: unknown) => this.log.debug("socket close failed", { error: errorMessage(error) }));
    this.web = undefined;
    this.connection = { ...this.connection, connected: false };
  }

  async send(message: OutboundMessage): Promise<void> {
    switch (message.kind) {
      case "message":
        await this.sendReply(message.chatId, message.id, message.content, message.media, this.threadFor(message.chatId, message.replyTo));
        return this.replied(message.chatId, message.replyTo);
      case "delta":
        return this.onDelta(message.streamId, message.chatId, message.delta, message.replyTo);
      case "stream_end":
        await this.onStreamEnd(message.streamId, message.chatId, message.id, message.content, message.replyTo);
        return this.replied(message.chatId, message.replyTo);
      case "progress": {
        if (!this.config.sendProgress) return;
        const threadTs = this.threadFor(message.chatId, message.replyTo);
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => this.post(message.chatId, message.text, threadTs), classifySlackError);
        return;
      }
      case "typing":
        // Slack shows no typing indicator for bots; the reactEmoji receipt says "working".
        return;
    }
  }

  private setConnected(connected: boolean, lastError?: string): void {
    // The last problem stays visible after a recovery (`nanobot channels list`).
    const error = lastError ?? this.connection.lastError;
    this.connection = { connected, ...(error ? { lastError: error } : {}) };
    if (lastError && !connected) this.log.warn("slack connection problem", { error: lastError });
  }

  private client(): WebClient {
    if (!this.web) throw new Error(`${this.name}: channel not started`);
    return this.web;
  }

  private onEvent(raw: Record<string, unknown>): void {
    const event = narrowEvent(raw);
    if (!event) return;
    this.onMessage(event).catch((error: unknown) => this.log.error("slack message failed", { error: errorMessage(error) }));
  }

  private async onMessage(event: NonNullable<ReturnType<typeof narrowEvent>>): Promise<void> {
    if (!this.web) return;
    const inbound = await toSlackInbound(event, {
      channel: this.name,
      config: this.config,
      botId: this.botId,
      mediaDir: join(this.deps.home, "media", this.name),
      isOwnMessage: (chat, ts) => this.own.has(`${chat}:${ts}`),
      onDownloadError: (file, error) => this.log.warn("slack file download failed", { file, error: errorMessage(error) }),
    });
    if (!inbound) return;
    await this.addThreadContext(inbound);
    const { input } = inbound;
    const listed = input.isDirect && this.deps.dmGate !== undefined && this.config.dm.allowFrom.includes(input.sender.id);
    const gate = listed && this.deps.dmGate ? this.deps.dmGate : this.deps.gate;
    const outcome = await gate.receive(input, async (text) => {
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => this.post(input.chatId, text), classifySlackError);
    });
    if (outcome !== "forwarded") return;
    this.remember(input.chatId, inbound.ts, inbound.threadTs ?? null);
    const answering: Answering = { ts: inbound.ts, ...(inbound.threadTs ? { threadTs: inbound.threadTs } : {}), reacted: false };
    this.answering.set(`${input.chatId}:${inbound.ts}`, answering);
    this.lastAsked.set(input.chatId, inbound.ts);
    if (this.answering.size > ANSWERING_MEMORY) {
      const oldest = this.answering.keys().next().value;
      if (oldest !== undefined) this.answering.delete(oldest);
    }
    if (this.config.reactEmoji) {
      answering.reacted = true;
      await react(this.client(), input.chatId, inbound.ts, this.config.reactEmoji, true).catch((error: unknown) => this.log.debug("reaction failed", { error: errorMessage(error) }));
    }
  }

  /** The first time the bot is addressed inside a thread, the model also gets the thread so far. */
  private async addThreadContext(inbound: SlackInbound): Promise<void> {
    const { input, threadTs } = inbound;
    if (!this.config.includeThreadContext || !inbound.inThread || !threadTs || input.content.trim().startsWith("/")) return;
    const key = `${input.chatId}:${threadTs}`;
    if (this.contextGiven.has(key)) return;
    this.contextGiven.add(key);
    try {
      const messages = await threadMessages(this.client(), input.chatId, threadTs, this.config.threadContextLimit);
      input.content = threadContext(messages, { currentTs: inbound.ts, botId: this.botId, text: input.content });
    } catch (error) {
      this.log.warn("slack thread context unavailable", { thread: key, error: errorMessage(error) });
    }
  }

  private remember(chat: string, ts: string, threadTs: string | null): void {
    const key = `${chat}:${ts}`;
    this.threads.delete(key);
    this.threads.set(key, threadTs);
    if (this.threads.size > THREAD_MEMORY) {
      const oldest = this.threads.keys().next().value;
      if (oldest !== undefined) this.threads.delete(oldest);
    }
  }

  /** The thread a reply to `replyTo` goes in: the asking message's thread (or none in a plain DM). */
  private threadFor(chat: string, replyTo: string | undefined): string | undefined {
    if (!replyTo) return this.answeringFor(chat, undefined)?.threadTs;
    const known = this.threads.get(`${chat}:${replyTo}`);
    if (known !== undefined) return known ?? undefined;
    // A message ts this process did not see (e.g. after a restart): thread under it.
    return /^\d+\.\d+$/.test(replyTo) ? replyTo : undefined;
  }

  /** The message a reply answers: `replyTo`, else the chat's last forwarded message. */
  private answeringFor(chat: string, replyTo: string | undefined): Answering | undefined {
    const ts = replyTo ?? this.lastAsked.get(chat);
    return ts === undefined ? undefined : this.answering.get(`${chat}:${ts}`);
  }

  /** Swaps the working reaction for the done one on the message just answered. */
  private async replied(chat: string, replyTo: string | undefined): Promise<void> {
    const answering = this.answeringFor(chat, replyTo);
    if (!answering) return;
    this.answering.delete(`${chat}:${answering.ts}`);
    if (this.lastAsked.get(chat) === answering.ts) this.lastAsked.delete(chat);
    if (!answering.reacted) return;
    const web = this.client();
    const { reactEmoji, doneEmoji } = this.config;
    const quiet = (error: unknown): void => this.log.debug("reaction update failed", { error: errorMessage(error) });
    await react(web, chat, answering.ts, reactEmoji, false).catch(quiet);
    if (doneEmoji) await react(web, chat, answering.ts, doneEmoji, true).catch(quiet);
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  private async post(chat: string, text: string, threadTs?: string): Promise<string> {
    const ts = await postText(this.client(), chat, text, threadTs ? { threadTs } : {});
    this.own.add(`${chat}:${ts}`);
    return ts;
  }

  private async sendReply(chat: string, id: string, content: string, media: MediaItem[] | undefined, threadTs: string | undefined): Promise<void> {
    const chunks = splitMessage(toMrkdwn(content), SLACK_TEXT_LIMIT);
    for (const [i, chunk] of chunks.entries()) {
      await this.deps.delivery.deliver(this.key(id, i), () => this.post(chat, chunk, threadTs), classifySlackError);
    }
    for (const [i, item] of (media ?? []).entries()) {
      const key = this.key(id, `media${i}`);
      if (this.deps.delivery.isDelivered(key)) continue;
      const file = await loadFile(item);
      const label = item.name ?? item.path ?? item.url ?? "file";
      if (!file) {
        this.log.warn("slack attachment unreadable, sending a note instead", { file: label });
        await this.deps.delivery.deliver(key, () => this.post(chat, `[attachment: ${label} - send failed]`, threadTs), classifySlackError);
        continue;
      }
      const web = this.client();
      await this.deps.delivery.deliver(key, () => uploadFile(web, chat, file, threadTs ? { threadTs } : {}), classifySlackError);
    }
  }

  private onDelta(streamId: string, chat: string, delta: string, replyTo: string | undefined): void {
    if (!this.config.streaming || this.ended.has(streamId)) return;
    let editor = this.streams.get(streamId);
    if (!editor) {
      const threadTs = this.threadFor(chat, replyTo);
      editor = new StreamEditor<string>(
        {
          post: (text) => this.post(chat, toMrkdwn(text), threadTs),
          edit: (ts, text) => editText(this.client(), chat, ts, toMrkdwn(text)),
        },
        { intervalMs: this.config.streamEditIntervalMs, clock: this.deps.clock, previewLimit: SLACK_TEXT_LIMIT, logger: this.log },
      );
      this.streams.set(streamId, editor);
    }
    editor.push(delta);
  }

  /** Turns the preview into the final text; further chunks follow as new messages in the same thread. */
  private async onStreamEnd(streamId: string, chat: string, id: string, content: string, replyTo: string | undefined): Promise<void> {
    const editor = this.streams.get(streamId);
    this.streams.delete(streamId);
    this.ended.add(streamId);
    const threadTs = this.threadFor(chat, replyTo);
    const ts = editor ? (await editor.finish()).ref : undefined;
    if (ts === undefined) return this.sendReply(chat, id, content, undefined, threadTs);
    const web = this.client();
    const chunks = splitMessage(toMrkdwn(content), SLACK_TEXT_LIMIT);
    if (chunks.length === 0 || this.deps.delivery.isDelivered(this.key(id, 0))) {
      // A suppressed reply, or a resumed turn re-streaming one already delivered: remove the preview.
      await deleteMessage(web, chat, ts).catch(() => undefined);
      return;
    }
    for (const [i, chunk] of chunks.entries()) {
      const send = async (): Promise<void> => {
        if (i === 0) await editText(web, chat, ts, chunk);
        else await this.post(chat, chunk, threadTs);
      };
      await this.deps.delivery.deliver(this.key(id, i), send, classifySlackError);
    }
  }
}

function withSlash(url: string): string {
  return url.endsWith("/") ? url : `${url}/`;
}
