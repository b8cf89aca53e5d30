/**
 * Signal through a signal-cli daemon in HTTP mode (`signal-cli -a +1555… daemon --http
 * host:port`): incoming messages from its Server-Sent Events stream, sends and typing through
 * JSON-RPC. Direct messages and groups (mention/quote rules, or the Python nanobot's `dm` /
 * `group` policies), attachments both ways, threaded replies as quotes, typing. Signal marks an
 * edited message as edited and allows few edits, so a streamed reply is sent once, at its end.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { GateInput, InboundGate } from "../access/inbound-gate.js";
import { LruSet } from "../delivery/lru-set.js";
import { splitMessage } from "../delivery/split-message.js";
import { TypingKeeper } from "../delivery/typing-keeper.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import { daemonUrl } from "./config.js";
import type { SignalConfig } from "./config.js";
import { SignalEventStream } from "./event-stream.js";
import { GroupContext } from "./group-context.js";
import { idVariants } from "./ids.js";
import { markdownToSignal } from "./markdown.js";
import { addressesBot, copyAttachments, parseReceive, stripBotMention } from "./inbound.js";
import type { SignalInbound } from "./inbound.js";
import { SignalRpc, classifySignalError } from "./rpc.js";
import { SIGNAL_TEXT_LIMIT, attachmentUri, sendText, sendTyping } from "./send.js";

/** Who may reach the agent, per kind of chat (built by the factory from the config). */
export interface SignalAccess {
  dm: { gate: InboundGate; allowFrom: readonly string[] } | undefined;
  group: { gate: InboundGate; allowFrom: readonly string[] } | undefined;
}

export interface SignalChannelOptions extends ChannelDeps {
  config: SignalConfig;
  name?: string;
  access: SignalAccess;
}

export class SignalChannel implements Channel {
  readonly name: string;
  private readonly config: SignalConfig;
  private readonly deps: ChannelDeps;
  private readonly access: SignalAccess;
  private readonly log: Logger;
  private rpc: SignalRpc | undefined;
  private stream: SignalEventStream | undefined;
  private readonly typing: TypingKeeper;
  /** `<chatId>:<timestamp>` of messages this bot sent: quoting one addresses the bot. */
  private readonly own = new LruSet(5_000);
  /** `<chatId>:<timestamp>` → author of the messages forwarded, for quoting them in the reply. */
  private readonly authors = new Map<string, string>();
  private readonly groups: GroupContext;
  private connection: ChannelConnection = { connected: false };

  constructor(options: SignalChannelOptions) {
    this.name = options.name ?? "signal";
    this.config = options.config;
    this.deps = options;
    this.access = options.access;
    this.log = options.logger.child({ channel: this.name });
    this.groups = new GroupContext(options.config.groupMessageBufferSize);
    // Signal clients show "typing…" for about 15 s; refreshed every 10 s as the Python nanobot.
    this.typing = new TypingKeeper({
      clock: options.clock,
      refreshMs: 10_000,
      send: async (chatId) => {
        const rpc = this.rpc;
        if (!rpc) return;
        await sendTyping(rpc, chatId).catch((error: unknown) => this.log.debug("typing failed", { error: errorMessage(error) }));
      },
    });
  }

  status(): ChannelConnection {
    return { ...this.connection };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.stream) return;
    const rpc = new SignalRpc(daemonUrl(this.config));
    this.rpc = rpc;
    const stream = new SignalEventStream({
      baseUrl: rpc.url,
      clock: this.deps.clock,
      prepare: async () => {
        await rpc.check(signal.aborted ? undefined : AbortSignal.any([signal, AbortSignal.timeout(10_000)]));
        // Account-level typing indicators must be on for sendTyping to show (best effort).
        await rpc.call("updateConfiguration", { typingIndicators: true }).catch((error: unknown) => this.log.warn("signal-cli updateConfiguration failed", { error: errorMessage(error) }));
      },
      onReceive: (params) => {
        this.onReceive(params).catch((error: unknown) => this.log.error("signal message failed", { error: errorMessage(error) }));
      },
      onOpen: () => this.setConnected(true),
      onDown: (reason) => this.setConnected(false, reason),
    });
    this.stream = stream;
    try {
      await stream.start();
    } catch (error) {
      this.stream = undefined;
      const reason = `${errorMessage(error)} — is the daemon running (signal-cli -a ${this.config.phoneNumber} daemon --http ${this.config.daemonHost}:${this.config.daemonPort})?`;
      this.connection = { connected: false, lastError: reason };
      throw new Error(reason);
    }
    this.log.info("signal connected", { daemon: rpc.url });
  }

  async stop(): Promise<void> {
    const stream = this.stream;
    this.stream = undefined;
    this.typing.stopAll();
    await stream?.stop();
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
        const rpc = this.client();
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => sendText(rpc, message.chatId, message.text), classifySignalError);
        return;
      }
      case "typing":
        return this.typing.start(message.chatId);
    }
  }

  private setConnected(connected: boolean, lastError?: string): void {
    this.connection = { connected, ...(lastError ? { lastError } : this.connection.lastError ? { lastError: this.connection.lastError } : {}) };
    if (lastError) this.log.warn("signal-cli connection problem", { error: lastError });
  }

  private client(): SignalRpc {
    if (!this.rpc) throw new Error(`${this.name}: channel not started`);
    return this.rpc;
  }

  private get account(): string[] {
    return [this.config.phoneNumber];
  }

  private async onReceive(params: Record<string, unknown>): Promise<void> {
    const message = parseReceive(params);
    if (!message || sameAccount(message.sender, this.account)) return;
    const input = message.groupId !== undefined ? await this.groupInput(message, message.groupId) : await this.directInput(message);
    if (!input) return;
    const { gate, value } = input;
    const rpc = this.client();
    // Remembered before forwarding: the reply may be on its way before `receive` returns.
    this.rememberAuthor(value.chatId, message.timestamp, message.sender[0]!);
    const outcome = await gate.receive(value, async (text) => {
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => sendText(rpc, value.chatId, text), classifySignalError);
    });
    if (outcome !== "forwarded") return;
    void this.typing.start(value.chatId);
  }

  private async directInput(message: SignalInbound): Promise<{ gate: InboundGate; value: GateInput } | undefined> {
    const access = this.access.dm;
    if (!access) {
      this.log.debug("direct message ignored (channels.signal.dm.enabled is false)");
      return undefined;
    }
    const chatId = message.sender[0]!;
    return { gate: access.gate, value: await this.toGateInput(message, chatId, message.text, true, access.allowFrom) };
  }

  private async groupInput(message: SignalInbound, groupId: string): Promise<{ gate: InboundGate; value: GateInput } | undefined> {
    const access = this.access.group;
    const python = this.config.group;
    if (!access) {
      this.log.debug("group message ignored (channels.signal.group.enabled is false)");
      return undefined;
    }
    if (python?.policy === "allowlist" && !python.allowFrom.includes(groupId)) {
      this.log.info("group message ignored: the group is not in channels.signal.group.allowFrom", { groupId });
      return undefined;
    }
    const name = message.senderName ?? message.sender[0]!;
    // The Python nanobot keeps recent group messages and hands them over with the next question.
    if (python) this.groups.add(groupId, name, message.text);
    const mentionOnly = python ? python.requireMention : this.config.groupPolicy === "mention";
    const chat = { account: this.account, isOwnMessage: (ts: number) => this.own.has(`${groupId}:${ts}`) };
    if (mentionOnly && !addressesBot(message, chat)) return undefined;
    let text = stripBotMention(message, this.account);
    if (python) {
      const context = this.groups.context(groupId);
      text = [context ? `[Recent group messages for context:]\n${context}\n---` : "", text ? `[${name}]: ${text}` : ""].filter(Boolean).join("\n");
    }
    return { gate: access.gate, value: await this.toGateInput(message, groupId, text, false, access.allowFrom) };
  }

  private async toGateInput(message: SignalInbound, chatId: string, text: string, isDirect: boolean, allowFrom: readonly string[]): Promise<GateInput> {
    const attachmentsDir = this.config.attachmentsDir ?? join(homedir(), ".local", "share", "signal-cli", "attachments");
    const { media, missing } = await copyAttachments(message, attachmentsDir, join(this.deps.home, "media", this.name));
    if (missing.length) this.log.warn("signal attachment not found in the attachments folder", { attachmentsDir, missing });
    const content = [text, ...missing].filter(Boolean).join("\n");
    const metadata: Record<string, unknown> = { messageId: String(message.timestamp), timestamp: message.timestamp, senderNumber: message.sender[0] };
    if (message.senderName) metadata.senderName = message.senderName;
    if (!isDirect) metadata.groupId = chatId;
    const input: GateInput = {
      id: `${chatId}:${message.sender[0]!}:${message.timestamp}`,
      chatId,
      sender: { id: pickSenderId(message.sender, allowFrom) },
      content,
      isDirect,
      metadata,
    };
    if (media.length) input.media = media;
    return input;
  }

  private rememberAuthor(chatId: string, timestamp: number, author: string): void {
    const key = `${chatId}:${timestamp}`;
    this.authors.set(key, author);
    // Keep the map bounded: the oldest entries go first.
    if (this.authors.size > 5_000) this.authors.delete(this.authors.keys().next().value!);
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  private async post(chatId: string, text: string, quote?: { timestamp: number; author: string }, attachments?: string[], styles?: string[]): Promise<number> {
    const timestamp = await sendText(this.client(), chatId, text, { ...(quote ? { quote } : {}), ...(attachments ? { attachments } : {}), ...(styles ? { styles } : {}) });
    this.own.add(`${chatId}:${timestamp}`);
    return timestamp;
  }

  private async sendReply(chatId: string, id: string, content: string, media: MediaItem[] | undefined, replyTo: string | undefined): Promise<void> {
    const author = replyTo ? this.authors.get(`${chatId}:${replyTo}`) : undefined;
    const quote = replyTo && author ? { timestamp: Number(replyTo), author } : undefined;
    const attachments: string[] = [];
    const notes: string[] = [];
    for (const item of media ?? []) {
      const uri = await attachmentUri(item);
      if (uri) attachments.push(uri);
      else {
        const label = item.name ?? item.path ?? item.url ?? "file";
        this.log.warn("signal attachment unreadable, sending a note instead", { file: label });
        notes.push(`[attachment: ${label} - send failed]`);
      }
    }
    const source = [content, ...notes].filter(Boolean).join("\n");
    // Split the Markdown (code blocks stay whole), then turn each part into text + styles.
    const chunks = (source ? splitMessage(source, SIGNAL_TEXT_LIMIT) : []).map(markdownToSignal).filter((c) => c.text.trim() !== "");
    if (chunks.length === 0 && attachments.length > 0) chunks.push({ text: "", styles: [] });
    for (const [i, chunk] of chunks.entries()) {
      // Files go with the first message, as the Python nanobot sends them.
      const files = i === 0 && attachments.length > 0 ? attachments : undefined;
      await this.deps.delivery.deliver(this.key(id, i), () => this.post(chatId, chunk.text, i === 0 ? quote : undefined, files, chunk.styles), classifySignalError);
    }
  }
}

function sameAccount(ids: readonly string[], account: readonly string[]): boolean {
  const mine = new Set(account.flatMap(idVariants));
  return ids.flatMap(idVariants).some((v) => mine.has(v));
}

/** The sender's id as the allow list spells it (a UUID-listed user keeps their UUID); else the phone number. */
function pickSenderId(sender: readonly string[], allowFrom: readonly string[]): string {
  const listed = new Set(allowFrom);
  for (const part of sender) for (const v of idVariants(part)) if (listed.has(v)) return v;
  return sender[0]!;
}
