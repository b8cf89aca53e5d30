/**
 * QQ personal accounts through NapCat, speaking OneBot v11 over NapCat's WebSocket server.
 * Chats are `private:<QQ number>` and `group:<group number>` (the Python nanobot's ids, so its
 * sessions carry over). Group messages are answered when they @-mention the bot or reply to one
 * of its messages, else as `groupPolicy` says. OneBot cannot edit a sent message, so a streamed
 * reply is sent once, at its end. OneBot v11 has no typing indicator; NapCat's own
 * `set_input_status` shows "typing…" in private chats (QQ has none for groups), kept alive by a
 * TypingKeeper until the reply is sent.
 */
import { join } from "node:path";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import { KeyedSerial } from "../../core/keyed-serial.js";
import type { Logger } from "../../core/logger.js";
import type { GateInput } from "../access/inbound-gate.js";
import type { RetryDecision } from "../delivery/delivery-queue.js";
import { LruSet } from "../delivery/lru-set.js";
import { splitMessage } from "../delivery/split-message.js";
import { TypingKeeper } from "../delivery/typing-keeper.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import { NAPCAT_TEXT_LIMIT, groupPolicyFor } from "./config.js";
import type { NapcatConfig } from "./config.js";
import { downloadSegment, isInlineImage, mediaSegment } from "./media.js";
import { OneBotClient, OneBotError } from "./onebot-client.js";
import { normalizeSegments, parseSegments, replySegment, textSegment } from "./segments.js";
import type { Segment } from "./segments.js";

/** How often "typing…" is repeated while the agent works (the QQ client drops it after a few seconds). */
export const NAPCAT_TYPING_REFRESH_MS = 5_000;

/** OneBot's retcodes for a request the implementation will never accept as sent. */
const REFUSED = new Set([1400, 1401, 1403, 1404]);

/**
 * A refused request fails at once; a timed-out one is not retried because NapCat may have sent
 * it (a retry could post the message twice). Everything else (not connected, the connection
 * lost mid-call, NapCat's own send failures) is retried.
 */
export function classifyNapcatError(error: unknown): RetryDecision {
  if (!(error instanceof OneBotError)) return { retryable: false };
  if (error.reason === "timeout") return { retryable: false };
  if (error.reason === "failed") return { retryable: error.retcode === undefined || !REFUSED.has(error.retcode) };
  return { retryable: true };
}

export interface NapcatChannelOptions extends ChannelDeps {
  config: NapcatConfig;
  name?: string;
  /** Draws the chance for a numeric groupPolicy (tests pin it). */
  random?: () => number;
}

interface Target {
  kind: "private" | "group";
  id: number;
}

function parseTarget(chatId: string): Target | undefined {
  const match = /^(private|group):(\d+)$/.exec(chatId);
  return match ? { kind: match[1] as Target["kind"], id: Number(match[2]) } : undefined;
}

export class NapcatChannel implements Channel {
  readonly name: string;
  private readonly config: NapcatConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private readonly random: () => number;
  private client: OneBotClient | undefined;
  private connection: ChannelConnection = { connected: false };
  /** Ids of the bot's own messages, so a reply to one is recognised without asking NapCat. */
  private readonly botMessages = new LruSet(2_000);
  private readonly typing: TypingKeeper;
  /** A chat's events are handled one after another, in order. */
  private readonly chats = new KeyedSerial();

  constructor(options: NapcatChannelOptions) {
    this.name = options.name ?? "napcat";
    this.config = options.config;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
    this.random = options.random ?? Math.random;
    this.typing = new TypingKeeper({ clock: options.clock, refreshMs: NAPCAT_TYPING_REFRESH_MS, send: (chatId) => this.sendTyping(chatId) });
  }

  status(): ChannelConnection {
    return { ...this.connection };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.client) return;
    const client = new OneBotClient({
      url: this.config.wsUrl,
      accessToken: this.config.accessToken,
      clock: this.deps.clock,
      logger: this.log,
      onEvent: (event) => this.onEvent(event),
      onState: (connected, problem) => {
        const lastError = problem ?? this.connection.lastError;
        this.connection = { connected, ...(lastError ? { lastError } : {}) };
      },
    });
    this.client = client;
    try {
      await client.start(signal);
    } catch (error) {
      this.connection = { connected: false, lastError: errorMessage(error) };
      throw new Error(`${errorMessage(error)} (check channels.${this.name}.wsUrl "${this.config.wsUrl}"${this.config.accessToken ? ` and channels.${this.name}.accessToken` : ""}, and that NapCat's WebSocket server is on)`, { cause: error });
    }
    this.connection = { connected: true };
  }

  async stop(): Promise<void> {
    this.typing.stopAll();
    this.client?.stop();
    this.client = undefined;
    this.connection = { ...this.connection, connected: false };
  }

  async send(message: OutboundMessage): Promise<void> {
    switch (message.kind) {
      case "message":
        return this.sendReply(message.chatId, message.id, message.content, message.media ?? [], message.replyTo);
      case "stream_end":
        // OneBot cannot edit a message: the whole reply goes out once, at the end.
        return this.sendReply(message.chatId, message.id, message.content, [], message.replyTo);
      case "progress": {
        if (!this.config.sendProgress) return;
        const target = this.target(message.chatId);
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => this.sendSegments(target, [textSegment(message.text)]), classifyNapcatError);
        return;
      }
      case "typing":
        if (message.chatId.startsWith("private:")) await this.typing.start(message.chatId);
        return;
      case "delta":
        return;
    }
  }

  /** NapCat's `set_input_status` (event_type 1: "typing…"); private chats only, best effort. */
  private async sendTyping(chatId: string): Promise<void> {
    const target = parseTarget(chatId);
    if (target?.kind !== "private") return;
    await this.call("set_input_status", { user_id: target.id, event_type: 1 }).catch((error: unknown) => this.log.debug("napcat set_input_status failed", { error: errorMessage(error) }));
  }

  private call(action: string, params: Record<string, unknown>): Promise<unknown> {
    if (!this.client) return Promise.reject(new OneBotError(`napcat: ${action}: channel not started`, action, "not_connected"));
    return this.client.call(action, params);
  }

  /** Events of one chat are handled in order (a download or a get_msg must not let a later message overtake). */
  private onEvent(event: Record<string, unknown>): void {
    const handle = event.post_type === "message" ? () => this.onMessage(event) : event.post_type === "notice" ? () => this.onNotice(event) : undefined;
    if (!handle) return;
    const key = event.group_id !== undefined && event.group_id !== null ? `group:${String(event.group_id)}` : `private:${String(event.user_id)}`;
    void this.chats.run(key, handle).catch((error: unknown) => this.log.error("napcat event failed", { postType: event.post_type, error: errorMessage(error) }));
  }

  private async onMessage(event: Record<string, unknown>): Promise<void> {
    const type = event.message_type;
    const userId = event.user_id;
    if ((type !== "private" && type !== "group") || userId === undefined || userId === null) return;
    if (type === "group" && (event.group_id === undefined || event.group_id === null)) return;
    // NapCat can report the account's own messages (reportSelfMessage); answering them would loop.
    if (String(userId) === this.client?.selfId) return;
    const chatId = type === "group" ? `group:${String(event.group_id)}` : `private:${String(userId)}`;
    const parsed = parseSegments(normalizeSegments(event.message), this.client?.selfId);
    const addressed = type === "group" && (parsed.mentionsBot || (parsed.replyTo !== undefined && (await this.isBotMessage(parsed.replyTo))));
    if (type === "group" && !addressed && !this.groupAnswers(String(event.group_id))) return;
    const media = await this.downloadAll(parsed.downloads);
    if (!parsed.text && media.length === 0) return;
    const sender = (event.sender ?? {}) as { card?: unknown; nickname?: unknown };
    const senderName = [sender.card, sender.nickname].find((v): v is string => typeof v === "string" && v.length > 0);
    const messageId = event.message_id === undefined || event.message_id === null ? undefined : String(event.message_id);
    const input: GateInput = {
      id: `${chatId}:${messageId ?? `${String(event.time)}:${String(userId)}`}`,
      chatId,
      sender: { id: String(userId) },
      // A group is one session for everyone in it: as in Python's channel, each message says who wrote it.
      content: type === "group" ? `${senderName ?? String(userId)}: ${parsed.text}`.trimEnd() : parsed.text,
      isDirect: type === "private",
      metadata: {
        ...(messageId ? { messageId } : {}),
        chatType: type,
        ...(senderName ? { senderName } : {}),
        ...(parsed.replyTo ? { replyTo: parsed.replyTo } : {}),
        ...(type === "group" ? { groupId: String(event.group_id), mentioned: addressed } : {}),
      },
    };
    if (media.length) input.media = media;
    const outcome = await this.deps.gate.receive(input, async (text) => {
      const target = this.target(`private:${String(userId)}`);
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => this.sendSegments(target, [textSegment(text)]), classifyNapcatError);
    });
    if (outcome === "forwarded" && type === "private") await this.typing.start(chatId);
  }

  private groupAnswers(groupId: string): boolean {
    const policy = groupPolicyFor(this.config, groupId);
    if (policy === "open") return true;
    if (policy === "mention") return false;
    return this.random() < policy;
  }

  /** A quoted message is the bot's when the bot sent it here, else when NapCat says so (`get_msg`). */
  private async isBotMessage(messageId: string): Promise<boolean> {
    if (this.botMessages.has(messageId)) return true;
    const selfId = this.client?.selfId;
    if (!selfId || !/^-?\d+$/.test(messageId)) return false;
    try {
      const data = ((await this.call("get_msg", { message_id: Number(messageId) })) ?? {}) as { user_id?: unknown; sender?: { user_id?: unknown } };
      return String(data.sender?.user_id ?? data.user_id ?? "") === selfId;
    } catch (error) {
      this.log.debug("napcat get_msg failed", { messageId, error: errorMessage(error) });
      return false;
    }
  }

  private async downloadAll(segments: Segment[]): Promise<MediaItem[]> {
    const context = {
      dir: join(this.deps.home, "media", this.name),
      maxBytes: this.config.maxImageBytes,
      now: () => this.deps.clock.now(),
      logger: this.log,
      call: (action: string, params: Record<string, unknown>) => this.call(action, params),
    };
    const out: MediaItem[] = [];
    for (const [i, segment] of segments.entries()) {
      const item = await downloadSegment(segment, i, context);
      if (item) out.push(item);
    }
    return out;
  }

  /** `group_increase`: tells the agent a member joined, through the gate like any message. */
  private async onNotice(event: Record<string, unknown>): Promise<void> {
    if (event.notice_type !== "group_increase" || !this.config.welcomeNewMembers) return;
    const groupId = Number(event.group_id);
    const userId = Number(event.user_id);
    if (!Number.isSafeInteger(groupId) || !Number.isSafeInteger(userId)) return;
    const name = await this.memberName(groupId, userId);
    const chatId = `group:${groupId}`;
    await this.deps.gate.receive(
      {
        id: `${chatId}:join:${userId}:${String(event.time ?? this.deps.clock.now())}`,
        chatId,
        sender: { id: String(userId) },
        content: `[group event] new member ${name} joined group ${groupId}`,
        isDirect: false,
        metadata: { chatType: "group", groupId: String(groupId), event: "group_increase" },
      },
      // Group senders never get a pairing code; nothing to reply.
      async () => undefined,
    );
  }

  private async memberName(groupId: number, userId: number): Promise<string> {
    try {
      const data = ((await this.call("get_group_member_info", { group_id: groupId, user_id: userId, no_cache: true })) ?? {}) as { card?: unknown; nickname?: unknown };
      const name = [data.card, data.nickname].find((v): v is string => typeof v === "string" && v.length > 0);
      return name ?? String(userId);
    } catch (error) {
      this.log.warn("napcat get_group_member_info failed", { error: errorMessage(error) });
      return String(userId);
    }
  }

  private target(chatId: string): Target {
    const target = parseTarget(chatId);
    if (!target) throw new Error(`${this.name}: chat id "${chatId}" is neither private:<QQ number> nor group:<group number>`);
    return target;
  }

  private async sendSegments(target: Target, message: Segment[]): Promise<string | undefined> {
    const params = target.kind === "group" ? { message_type: "group", group_id: target.id, message } : { message_type: "private", user_id: target.id, message };
    const data = ((await this.call("send_msg", params)) ?? {}) as { message_id?: unknown };
    if (data.message_id === undefined || data.message_id === null) return undefined;
    const id = String(data.message_id);
    this.botMessages.add(id);
    return id;
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  /** Files, voice and video first, each alone (NapCat sends them as their own message); then the text, images and the quote. */
  private async sendReply(chatId: string, id: string, content: string, media: MediaItem[], replyTo: string | undefined): Promise<void> {
    this.typing.stop(chatId);
    const target = this.target(chatId);
    const images = media.filter(isInlineImage);
    for (const [i, item] of media.entries()) {
      if (isInlineImage(item)) continue;
      await this.deps.delivery.deliver(this.key(id, `media${i}`), async () => this.sendSegments(target, [await mediaSegment(item)]), classifyNapcatError);
    }
    const chunks = splitMessage(content.trim(), NAPCAT_TEXT_LIMIT);
    if (chunks.length === 0 && images.length === 0) return;
    for (const [i, chunk] of (chunks.length ? chunks : [""]).entries()) {
      await this.deps.delivery.deliver(
        this.key(id, i),
        async () => {
          const head = i === 0 ? [...(replyTo ? [replySegment(replyTo)] : []), ...(await Promise.all(images.map(mediaSegment)))] : [];
          return this.sendSegments(target, [...head, ...(chunk ? [textSegment(chunk)] : [])]);
        },
        classifyNapcatError,
      );
    }
  }
}
