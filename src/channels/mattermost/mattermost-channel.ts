/**
 * Mattermost: the server's WebSocket for `posted` events (see event-socket.ts), REST through
 * @mattermost/client's Client4 for posts, edits, uploads and reactions. Direct messages
 * (channel type D) and channels (O/P/G, per groupPolicy), files both ways, replies threaded
 * under the asking post (replyInThread), streamed replies by editing one post, "typing…"
 * through the socket's `user_typing` action, and the reactEmoji / doneEmoji receipts.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import type { GateInput, InboundGate } from "../access/inbound-gate.js";
import { LruSet } from "../delivery/lru-set.js";
import { splitMessage } from "../delivery/split-message.js";
import { StreamEditor } from "../delivery/stream-editor.js";
import { TypingKeeper } from "../delivery/typing-keeper.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import { MATTERMOST_TEXT_LIMIT, websocketUrl } from "./config.js";
import type { MattermostConfig } from "./config.js";
import { EventSocket } from "./event-socket.js";
import type { MattermostEvent } from "./event-socket.js";
import { judgePost, mediaKind, readPosted } from "./inbound.js";
import type { Bot, MattermostPost, PostedEvent } from "./inbound.js";
import { classifyMattermostError, createClient, createPost, downloadFile, editPost, loadFile, postFiles, react, threadPosts, uploadFile } from "./rest.js";
import type { MattermostClient } from "./rest.js";

/** Files over this size are not downloaded (as the other channels). */
export const MAX_FILE_BYTES = 20 * 1024 * 1024;
/** Mattermost accepts at most this many files on one post. */
const FILES_PER_POST = 5;

export interface MattermostChannelOptions extends ChannelDeps {
  config: MattermostConfig;
  name?: string;
  /** The gate for direct messages (dm.policy / dm.allowFrom); `gate` serves channels. */
  dmGate?: InboundGate;
}

/** The user's post that carries the reactEmoji until the reply goes out. */
interface PendingReceipt {
  postId: string;
}

/** A small insertion-ordered map that forgets its oldest entries. */
class BoundedMap<V> extends Map<string, V> {
  constructor(private readonly capacity: number) {
    super();
  }
  override set(key: string, value: V): this {
    this.delete(key);
    super.set(key, value);
    if (this.size > this.capacity) this.delete(this.keys().next().value!);
    return this;
  }
}

export class MattermostChannel implements Channel {
  readonly name: string;
  private readonly config: MattermostConfig;
  private readonly deps: ChannelDeps;
  private readonly dmGate: InboundGate;
  private readonly log: Logger;
  private client: MattermostClient | undefined;
  private socket: EventSocket | undefined;
  private bot: Bot = { id: "", username: "" };
  private connection: ChannelConnection = { connected: false };
  private readonly typing: TypingKeeper;
  private readonly streams = new Map<string, StreamEditor<string>>();
  private readonly ended = new LruSet(1_000);
  /** Roots of threads the bot posted in: a reply there addresses the bot. */
  private readonly botThreads = new LruSet(5_000);
  /** The thread root a reply to this post goes under ("" = not threaded). */
  private readonly replyRoots = new BoundedMap<string>(5_000);
  /** Per chat, the thread of the post forwarded last (for outbound messages that name no replyTo). */
  private readonly chatThreads = new BoundedMap<string>(1_000);
  /** `chat:post` → the receipt on that post; several threads of a channel can be answered at once. */
  private readonly receipts = new BoundedMap<PendingReceipt>(1_000);
  /** Per chat, the post that got a receipt last (for replies that name no replyTo). */
  private readonly lastReceipt = new BoundedMap<string>(1_000);
  private readonly usernames = new BoundedMap<string>(5_000);
  private readonly contextGiven = new LruSet(5_000);
  /** Replies sent per chat, to notice a reply that overtook its own question's bookkeeping. */
  private readonly answered = new BoundedMap<number>(1_000);

  constructor(options: MattermostChannelOptions) {
    this.name = options.name ?? "mattermost";
    this.config = options.config;
    this.deps = options;
    this.dmGate = options.dmGate ?? options.gate;
    this.log = options.logger.child({ channel: this.name });
    // Mattermost clients show "typing…" for about 5 s after the last user_typing.
    this.typing = new TypingKeeper({
      clock: options.clock,
      refreshMs: 4000,
      send: async (chatId) => {
        this.socket?.userTyping(chatId, this.chatThreads.get(chatId) ?? "");
      },
    });
  }

  status(): ChannelConnection {
    return { ...this.connection };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.client) return;
    const client = await createClient(this.config.serverUrl, this.config.token);
    try {
      const me = await client.getMe();
      this.bot = { id: me.id, username: me.username };
    } catch (error) {
      const status = (error as { status_code?: unknown }).status_code;
      const hint = status === 401 ? ` (check channels.${this.name}.token)` : ` (check channels.${this.name}.serverUrl)`;
      const message = `${this.name}: GET ${this.config.serverUrl}/api/v4/users/me failed: ${errorMessage(error)}${hint}`;
      this.connection = { connected: false, lastError: message };
      throw new Error(message, { cause: error });
    }
    this.client = client;
    const socket = new EventSocket({
      url: websocketUrl(this.config.serverUrl),
      token: this.config.token,
      clock: this.deps.clock,
      logger: this.log,
      onEvent: (event) => this.onEvent(event),
      onState: (connected, problem) => this.setConnected(connected, problem),
    });
    this.socket = socket;
    try {
      await socket.start(signal);
    } catch (error) {
      this.connection = { connected: false, lastError: errorMessage(error) };
      throw error;
    }
    this.log.info("mattermost connected", { bot: this.bot.username });
  }

  async stop(): Promise<void> {
    this.socket?.stop();
    this.socket = undefined;
    this.typing.stopAll();
    for (const stream of this.streams.values()) await stream.finish();
    this.streams.clear();
    this.receipts.clear();
    this.client = undefined;
    this.connection = { ...this.connection, connected: false };
  }

  async send(message: OutboundMessage): Promise<void> {
    switch (message.kind) {
      case "message":
        await this.sendReply(message.chatId, message.id, message.content, message.media, this.rootForReply(message.replyTo));
        return this.replied(message.chatId, message.replyTo);
      case "delta":
        return this.onDelta(message.streamId, message.chatId, message.delta, message.replyTo);
      case "stream_end":
        await this.onStreamEnd(message.streamId, message.chatId, message.id, message.content, message.replyTo);
        return this.replied(message.chatId, message.replyTo);
      case "progress": {
        if (!this.config.sendProgress) return;
        const root = this.streamRoot(message.chatId, message.replyTo);
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => this.post(message.chatId, message.text, root), classifyMattermostError);
        return;
      }
      case "typing":
        return this.typing.start(message.chatId);
    }
  }

  private setConnected(connected: boolean, problem?: string): void {
    this.connection = { connected, ...(problem ? { lastError: problem } : this.connection.lastError ? { lastError: this.connection.lastError } : {}) };
    if (problem) this.log.warn("mattermost websocket problem", { error: problem });
  }

  private rest(): MattermostClient {
    if (!this.client) throw new Error(`${this.name}: channel not started`);
    return this.client;
  }

  private onEvent(event: MattermostEvent): void {
    if (event.event !== "posted") return;
    const posted = readPosted(event);
    if (!posted) return;
    this.onPosted(posted).catch((error: unknown) => this.log.error("mattermost post failed", { error: errorMessage(error) }));
  }

  private async onPosted(event: PostedEvent): Promise<void> {
    const { post } = event;
    if (post.user_id === this.bot.id) {
      // The bot's own posts (echoed by the server) mark the threads it takes part in.
      this.botThreads.add(post.root_id || post.id);
      return;
    }
    const verdict = judgePost(event, { bot: this.bot, config: this.config, botInThread: (root) => this.botThreads.has(root) });
    if (verdict.kind === "ignore") {
      this.log.debug("mattermost post ignored", { post: post.id, reason: verdict.reason });
      return;
    }
    const client = this.rest();
    const username = await this.username(post.user_id, event.senderName);
    const media = await this.downloadAll(client, post);
    if (!verdict.content && media.length === 0) return;
    let content = verdict.content;
    if (post.root_id && this.config.includeThreadContext) content = await this.withThreadContext(client, post.channel_id, post.root_id, post.id, content);
    const metadata: Record<string, unknown> = { messageId: post.id, channelType: event.channelType };
    if (post.root_id) metadata.rootId = post.root_id;
    if (event.teamId) metadata.teamId = event.teamId;
    if (username) metadata.senderName = username;
    const input: GateInput = {
      id: `${post.channel_id}:${post.id}`,
      chatId: post.channel_id,
      sender: { id: post.user_id, ...(username ? { username } : {}) },
      content,
      isDirect: verdict.isDirect,
      metadata,
    };
    if (media.length) input.media = media;
    if (verdict.threadRoot) {
      // A thread is its own conversation (the Python nanobot's session key).
      metadata.threadRoot = verdict.threadRoot;
      input.sessionKey = `${this.name}:${post.channel_id}:${verdict.threadRoot}`;
    }
    const gate = verdict.isDirect ? this.dmGate : this.deps.gate;
    // Known before the gate publishes: the agent may answer before receive() returns.
    this.replyRoots.set(post.id, verdict.threadRoot ?? "");
    const previousThread = this.chatThreads.get(post.channel_id);
    this.chatThreads.set(post.channel_id, verdict.threadRoot ?? "");
    const answeredBefore = this.answered.get(post.channel_id) ?? 0;
    const outcome = await gate.receive(input, async (text) => {
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => this.post(post.channel_id, text), classifyMattermostError);
    });
    if (outcome !== "forwarded") {
      if (previousThread === undefined) this.chatThreads.delete(post.channel_id);
      else this.chatThreads.set(post.channel_id, previousThread);
      return;
    }
    // Already answered (a fast agent): no receipt or typing left behind.
    if ((this.answered.get(post.channel_id) ?? 0) !== answeredBefore) return;
    await this.acknowledge(post.channel_id, post.id);
    void this.typing.start(post.channel_id);
  }

  private async username(userId: string, fallback: string): Promise<string> {
    const known = this.usernames.get(userId);
    if (known) return known;
    try {
      const user = await this.rest().getUser(userId);
      this.usernames.set(userId, user.username);
      return user.username;
    } catch (error) {
      this.log.debug("mattermost user lookup failed", { user: userId, error: errorMessage(error) });
      return fallback;
    }
  }

  private async downloadAll(client: MattermostClient, post: MattermostPost): Promise<MediaItem[]> {
    if (!post.file_ids?.length) return [];
    const out: MediaItem[] = [];
    const dir = join(this.deps.home, "media", this.name);
    let files: Awaited<ReturnType<typeof postFiles>>;
    try {
      files = await postFiles(client, post.id);
    } catch (error) {
      this.log.warn("mattermost file list failed", { post: post.id, error: errorMessage(error) });
      return [];
    }
    for (const file of files) {
      if (file.size !== undefined && file.size > MAX_FILE_BYTES) continue;
      try {
        const bytes = await downloadFile(client, file.id);
        await mkdir(dir, { recursive: true });
        const path = join(dir, `${file.id}_${file.name.replace(/[^\w.-]/g, "_")}`);
        await writeFile(path, bytes);
        out.push({ kind: mediaKind(file.mimeType), path, name: file.name, ...(file.mimeType ? { mimeType: file.mimeType } : {}) });
      } catch (error) {
        this.log.warn("mattermost file download failed", { file: file.id, error: errorMessage(error) });
      }
    }
    return out;
  }

  /** The first time the bot is addressed inside a thread, the model sees the thread so far. */
  private async withThreadContext(client: MattermostClient, channelId: string, rootId: string, postId: string, text: string): Promise<string> {
    const key = `${channelId}:${rootId}`;
    if (this.contextGiven.has(key) || this.botThreads.has(rootId)) return text;
    this.contextGiven.add(key);
    try {
      const posts = await threadPosts(client, rootId, this.config.threadContextLimit + 1);
      const lines = posts
        .filter((p) => p.id !== postId && p.message.trim())
        .slice(-this.config.threadContextLimit)
        .map((p) => {
          const who = p.userId === this.bot.id ? "you" : (this.usernames.get(p.userId) ?? p.userId);
          const said = p.message.trim();
          return `- ${who}: ${said.length > 500 ? `${said.slice(0, 500)}…` : said}`;
        });
      if (lines.length === 0) return text;
      return `Earlier in this Mattermost thread:\n${lines.join("\n")}\n\nThe message to answer:\n${text}`;
    } catch (error) {
      this.log.warn("mattermost thread context unavailable", { root: rootId, error: errorMessage(error) });
      return text;
    }
  }

  private async acknowledge(chatId: string, postId: string): Promise<void> {
    this.receipts.set(`${chatId}:${postId}`, { postId });
    this.lastReceipt.set(chatId, postId);
    if (!this.config.reactEmoji) return;
    await react(this.rest(), this.bot.id, postId, this.config.reactEmoji, true).catch((error: unknown) =>
      this.log.debug("reaction failed", { error: errorMessage(error) }),
    );
  }

  private async replied(chatId: string, replyTo: string | undefined): Promise<void> {
    this.answered.set(chatId, (this.answered.get(chatId) ?? 0) + 1);
    this.typing.stop(chatId);
    const postId = replyTo !== undefined && this.receipts.has(`${chatId}:${replyTo}`) ? replyTo : this.lastReceipt.get(chatId);
    const receipt = postId === undefined ? undefined : this.receipts.get(`${chatId}:${postId}`);
    if (!receipt) return;
    this.receipts.delete(`${chatId}:${receipt.postId}`);
    if (this.lastReceipt.get(chatId) === receipt.postId) this.lastReceipt.delete(chatId);
    const client = this.rest();
    const quiet = (error: unknown): void => this.log.debug("reaction failed", { error: errorMessage(error) });
    if (this.config.reactEmoji) await react(client, this.bot.id, receipt.postId, this.config.reactEmoji, false).catch(quiet);
    if (this.config.doneEmoji) await react(client, this.bot.id, receipt.postId, this.config.doneEmoji, true).catch(quiet);
  }

  /** The root a reply to `replyTo` goes under, as decided when that post came in. */
  private rootForReply(replyTo: string | undefined): string | undefined {
    if (!replyTo) return undefined;
    return this.replyRoots.get(replyTo) || undefined;
  }

  /**
   * Where a streamed reply (or progress) to `replyTo` goes: that post's thread as decided when it
   * came in; without a known `replyTo`, the thread of the chat's latest post.
   */
  private streamRoot(chatId: string, replyTo: string | undefined): string | undefined {
    const known = replyTo === undefined ? undefined : this.replyRoots.get(replyTo);
    if (known !== undefined) return known || undefined;
    return this.chatThreads.get(chatId) || undefined;
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  private async post(chatId: string, message: string, rootId?: string, fileIds?: string[]): Promise<string> {
    const id = await createPost(this.rest(), chatId, message, { ...(rootId ? { rootId } : {}), ...(fileIds?.length ? { fileIds } : {}) });
    this.botThreads.add(rootId || id);
    return id;
  }

  private async sendReply(chatId: string, id: string, content: string, media: MediaItem[] | undefined, rootId: string | undefined): Promise<void> {
    const chunks = splitMessage(content, MATTERMOST_TEXT_LIMIT);
    const { fileIds, notes } = this.deps.delivery.isDelivered(this.key(id, 0)) ? { fileIds: [], notes: [] } : await this.uploadAll(chatId, media ?? []);
    const groups: string[][] = [];
    for (let i = 0; i < fileIds.length; i += FILES_PER_POST) groups.push(fileIds.slice(i, i + FILES_PER_POST));
    const posts = Math.max(chunks.length, groups.length);
    for (let i = 0; i < posts; i++) {
      const text = chunks[i] ?? "";
      await this.deps.delivery.deliver(this.key(id, i), () => this.post(chatId, text, rootId, groups[i]), classifyMattermostError);
    }
    for (const [i, note] of notes.entries()) {
      await this.deps.delivery.deliver(this.key(id, `note${i}`), () => this.post(chatId, note, rootId), classifyMattermostError);
    }
  }

  /** Uploads a reply's files; an unreadable or refused file becomes a note instead. */
  private async uploadAll(chatId: string, media: MediaItem[]): Promise<{ fileIds: string[]; notes: string[] }> {
    const fileIds: string[] = [];
    const notes: string[] = [];
    for (const item of media) {
      const label = item.name ?? item.path ?? item.url ?? "file";
      const file = await loadFile(item);
      if (!file) {
        this.log.warn("mattermost attachment unreadable, sending a note instead", { file: label });
        notes.push(`[attachment: ${label} - send failed]`);
        continue;
      }
      try {
        fileIds.push(await this.deps.delivery.withRetries(`${this.name}:upload`, () => uploadFile(this.rest(), chatId, file), classifyMattermostError));
      } catch (error) {
        this.log.warn("mattermost upload failed, sending a note instead", { file: label, error: errorMessage(error) });
        notes.push(`[attachment: ${label} - send failed]`);
      }
    }
    return { fileIds, notes };
  }

  private onDelta(streamId: string, chatId: string, delta: string, replyTo: string | undefined): void {
    if (!this.config.streaming || this.ended.has(streamId)) return;
    let stream = this.streams.get(streamId);
    if (!stream) {
      this.typing.stop(chatId);
      const root = this.streamRoot(chatId, replyTo);
      stream = new StreamEditor<string>(
        {
          post: (text) => this.post(chatId, text, root),
          edit: (ref, text) => editPost(this.rest(), ref, text),
        },
        {
          intervalMs: this.config.streamEditIntervalMs,
          clock: this.deps.clock,
          previewLimit: Math.min(this.config.streamingMaxChars, MATTERMOST_TEXT_LIMIT),
          logger: this.log,
        },
      );
      this.streams.set(streamId, stream);
    }
    stream.push(delta);
  }

  /** Turns the preview into the final text; further chunks follow as new posts in the same thread. */
  private async onStreamEnd(streamId: string, chatId: string, id: string, content: string, replyTo: string | undefined): Promise<void> {
    const stream = this.streams.get(streamId);
    this.streams.delete(streamId);
    this.ended.add(streamId);
    const root = this.streamRoot(chatId, replyTo);
    const ref = stream ? (await stream.finish()).ref : undefined;
    if (ref === undefined) return this.sendReply(chatId, id, content, undefined, root);
    const client = this.rest();
    if (this.deps.delivery.isDelivered(this.key(id, 0))) {
      // A resumed turn re-streamed a reply that was already delivered: remove the extra preview.
      await client.deletePost(ref).catch(() => undefined);
      return;
    }
    for (const [i, chunk] of splitMessage(content, MATTERMOST_TEXT_LIMIT).entries()) {
      const send = async (): Promise<void> => {
        if (i === 0) await editPost(client, ref, chunk);
        else await this.post(chatId, chunk, root);
      };
      await this.deps.delivery.deliver(this.key(id, i), send, classifyMattermostError);
    }
  }
}
