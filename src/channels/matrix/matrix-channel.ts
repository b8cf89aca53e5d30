/**
 * Matrix through matrix-js-sdk: the client-server API's `/sync` long poll for incoming room
 * events (the SDK retries a failed sync after probing `/versions`, with its own back-off), and
 * room sends for replies. Direct chats (rooms of two) and group rooms (`groupPolicy`), invites
 * from allowed users joined automatically, attachments both ways through the media repository,
 * replies threaded to the asking event (inside its thread when it was in one), streamed replies
 * by `m.replace` edits, typing notifications, markdown sent as `org.matrix.custom.html`.
 * With `e2eeEnabled` (the default) encrypted rooms work too (`e2ee.ts`): incoming events are
 * decrypted into the same path, and everything sent into an encrypted room is encrypted.
 * matrix-js-sdk is loaded when the channel starts, so configs without Matrix never load it.
 */
import { basename, join } from "node:path";
import type * as MatrixSdk from "matrix-js-sdk";
import type { MatrixClient, MatrixEvent, Room } from "matrix-js-sdk";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { ConfigError, errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { LruSet } from "../delivery/lru-set.js";
import { splitMessage } from "../delivery/split-message.js";
import { StreamEditor } from "../delivery/stream-editor.js";
import { TypingKeeper } from "../delivery/typing-keeper.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import { encryptAttachment } from "./attachment-crypto.js";
import type { MatrixConfig } from "./config.js";
import type { MatrixE2ee } from "./e2ee.js";
import { startE2ee } from "./e2ee.js";
import { isDirectRoom, toGateInput } from "./inbound.js";
import { downloadMedia, Limiter, sdkLogger } from "./media.js";
import { useReleasableTimeouts } from "./request-timeouts.js";
import type { Placement, RoomContent } from "./send.js";
import { MATRIX_TEXT_LIMIT, classifyMatrixError, editContent, fileContent, loadFile, sendContent, textContent, txnIdFor, uploadFile } from "./send.js";
import type { MatrixSession } from "./session.js";
import { forgetStoredSession, logoutStoredSession, passwordLogin, readStoredSession, sessionPath } from "./session.js";

/** Matrix clients drop a typing notice after its timeout; it is renewed well before (as the Python nanobot). */
const TYPING_TIMEOUT_MS = 30_000;
export const TYPING_REFRESH_MS = 20_000;

export interface MatrixChannelOptions extends ChannelDeps {
  config: MatrixConfig;
  name?: string;
}

type Sdk = typeof MatrixSdk;

export class MatrixChannel implements Channel {
  readonly name: string;
  private readonly config: MatrixConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private client: MatrixClient | undefined;
  private session: MatrixSession | undefined;
  /** Set once the first sync is processed: the initial sync replays history, which is not answered. */
  private live = false;
  private readonly streams = new Map<string, StreamEditor<string>>();
  private readonly ended = new LruSet(1_000);
  /** Event ids the bot sent: a reply to one of them addresses the bot. */
  private readonly own = new LruSet(5_000);
  /** Inbound event id → its thread root, so the answer to it goes into the same thread. */
  private readonly threadOf = new Map<string, string>();
  private readonly warnedEncrypted = new Set<string>();
  private e2ee: MatrixE2ee | undefined;
  /** Megolm sessions whose undecryptable messages were already answered with a notice. */
  private readonly undecryptable = new LruSet(1_000);
  private readonly downloads: Limiter;
  private readonly typing: TypingKeeper;
  private connection: ChannelConnection = { connected: false };

  constructor(options: MatrixChannelOptions) {
    this.name = options.name ?? "matrix";
    this.config = options.config;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
    this.downloads = new Limiter(this.config.maxConcurrentMediaDownloads);
    this.typing = new TypingKeeper({
      clock: options.clock,
      refreshMs: TYPING_REFRESH_MS,
      send: (roomId) => this.setTyping(roomId, true),
    });
  }

  status(): ChannelConnection {
    return { ...this.connection };
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.client) return;
    const sdk = await import("matrix-js-sdk");
    // The SDK logs every sync hiccup to the console; the channel reports the states itself.
    (await import("matrix-js-sdk/lib/logger.js")).logger.setLevel("silent");
    const session = await this.login(sdk);
    this.session = session;
    // Not `createClient`: it adds a scheduler that retries failed sends on its own timers,
    // past `sendMaxRetries`; here the delivery queue owns every retry.
    const client = new sdk.MatrixClient({
      store: new sdk.MemoryStore(),
      baseUrl: this.config.homeserver,
      accessToken: session.accessToken,
      userId: session.userId,
      ...(session.deviceId ? { deviceId: session.deviceId } : {}),
      logger: sdkLogger(this.log),
    });
    useReleasableTimeouts(client);
    this.client = client;
    if (this.config.e2eeEnabled) await this.startEncryption(sdk, client);
    this.wire(sdk, client);
    const ready = new Promise<void>((resolve, reject) => {
      const onAbort = (): void => reject(new Error("matrix start aborted"));
      signal.addEventListener("abort", onAbort, { once: true });
      const onSync = (state: string, _prev: string | null, data?: { error?: Error }): void => {
        if (state === "PREPARED") {
          client.off(sdk.ClientEvent.Sync, onSync);
          signal.removeEventListener("abort", onAbort);
          resolve();
        } else if (state === "ERROR") {
          client.off(sdk.ClientEvent.Sync, onSync);
          signal.removeEventListener("abort", onAbort);
          reject(new Error(`matrix: the first /sync failed: ${data?.error ? errorMessage(data.error) : "unknown error"}`));
        }
      };
      client.on(sdk.ClientEvent.Sync, onSync);
    });
    try {
      await client.startClient({ initialSyncLimit: 10, lazyLoadMembers: false, threadSupport: false });
      await ready;
    } catch (error) {
      this.connection = { connected: false, lastError: errorMessage(error) };
      client.stopClient();
      this.client = undefined;
      throw error;
    }
    this.live = true;
    this.setConnected(true);
    this.log.info("matrix connected", { user: session.userId, homeserver: this.config.homeserver });
  }

  async stop(): Promise<void> {
    const client = this.client;
    if (!client) return;
    this.client = undefined;
    this.live = false;
    this.e2ee = undefined;
    this.typing.stopAll();
    for (const editor of this.streams.values()) await editor.finish();
    this.streams.clear();
    client.stopClient();
    client.removeAllListeners();
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
        const client = this.requireClient();
        // A notice: the conventional msgtype for bot chatter, which other bots do not answer.
        const content = { ...textContent(message.text), msgtype: "m.notice" };
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => this.sendEvent(client, message.chatId, content), classifyMatrixError);
        return;
      }
      case "typing":
        return this.typing.start(message.chatId);
    }
  }

  /** The access token to use: the configured one, a kept password session, or a new login. */
  private async login(sdk: Sdk): Promise<MatrixSession> {
    const { config } = this;
    if (!config.password) {
      const session: MatrixSession = { userId: config.userId, accessToken: config.accessToken!, ...(config.deviceId ? { deviceId: config.deviceId } : {}) };
      return this.checkToken(sdk, session, "accessToken");
    }
    const path = sessionPath(this.deps.home, this.name);
    let stored = await readStoredSession(path, config);
    if (stored && config.e2eeEnabled) {
      // The crypto keys of the kept device died with the last process: a new device replaces it.
      await logoutStoredSession(sdk, config.homeserver, stored, sdkLogger(this.log)).catch((error: unknown) =>
        this.log.debug("matrix logout of the previous device failed", { error: errorMessage(error) }),
      );
      this.log.info("matrix: the previous device is logged out; logging in as a new device for end-to-end encryption", { device: stored.deviceId });
      await forgetStoredSession(path);
      stored = undefined;
    }
    if (stored) {
      try {
        return await this.checkToken(sdk, stored, "password");
      } catch (error) {
        this.log.warn("kept matrix session no longer valid; logging in again", { error: errorMessage(error) });
        await forgetStoredSession(path);
      }
    }
    const anonymous = sdk.createClient({ baseUrl: config.homeserver, logger: sdkLogger(this.log) });
    try {
      const session = await passwordLogin(anonymous, config, path);
      this.log.info("matrix password login; session kept", { path });
      return session;
    } catch (error) {
      throw new ConfigError(`channels.${this.name}.password: the homeserver refused the login for ${config.userId}: ${errorMessage(error)}`, {
        path: `channels.${this.name}.password`,
        expected: "the bot account's password",
      });
    }
  }

  /** `whoami`: the token works and belongs to `userId`. */
  private async checkToken(sdk: Sdk, session: MatrixSession, key: string): Promise<MatrixSession> {
    const probe = sdk.createClient({ baseUrl: this.config.homeserver, accessToken: session.accessToken, userId: session.userId, logger: sdkLogger(this.log) });
    const path = `channels.${this.name}.${key}`;
    let who: { user_id: string; device_id?: string };
    try {
      who = await probe.whoami();
    } catch (error) {
      const status = (error as { httpStatus?: number }).httpStatus;
      if (status === 401 || status === 403) {
        throw new ConfigError(`${path}: the homeserver ${this.config.homeserver} refused the access token (${errorMessage(error)})`, { path, expected: "a valid access token" });
      }
      throw error;
    }
    if (who.user_id !== this.config.userId) {
      const idPath = `channels.${this.name}.userId`;
      throw new ConfigError(`${idPath}: is "${this.config.userId}" but the access token belongs to "${who.user_id}"`, { path: idPath, expected: who.user_id });
    }
    const deviceId = session.deviceId ?? who.device_id;
    return { ...session, ...(deviceId ? { deviceId } : {}) };
  }

  private wire(sdk: Sdk, client: MatrixClient): void {
    client.on(sdk.RoomEvent.Timeline, (event, room, toStartOfTimeline, _removed, data) => {
      if (!this.live || toStartOfTimeline || !room || data?.liveEvent === false) return;
      this.onEvent(event, room).catch((error: unknown) => this.log.error("matrix event failed", { error: errorMessage(error) }));
    });
    client.on(sdk.RoomEvent.MyMembership, (room, membership) => {
      if (membership !== "invite") return;
      this.onInvite(room).catch((error: unknown) => this.log.warn("matrix auto-join failed", { room: room.roomId, error: errorMessage(error) }));
    });
    client.on(sdk.ClientEvent.Sync, (state, _prev, data) => {
      if (state === "PREPARED" || state === "SYNCING" || state === "CATCHUP") {
        if (!this.connection.connected && this.live) this.log.info("matrix sync back");
        this.setConnected(true);
      } else if (state === "RECONNECTING" || state === "ERROR") {
        this.setConnected(false, `sync failed: ${data?.error ? errorMessage(data.error) : state.toLowerCase()}`);
      }
    });
  }

  private setConnected(connected: boolean, lastError?: string): void {
    this.connection = { connected, ...(lastError ? { lastError } : this.connection.lastError ? { lastError: this.connection.lastError } : {}) };
    if (lastError) this.log.warn("matrix sync problem", { error: lastError });
  }

  private requireClient(): MatrixClient {
    if (!this.client) throw new Error(`${this.name}: channel not started`);
    return this.client;
  }

  private botId(): string {
    return this.session?.userId ?? this.config.userId;
  }

  /** Invites are joined when the inviter may talk to the bot; with no allowFrom list, so they can pair. */
  private async onInvite(room: Room): Promise<void> {
    const inviter = room.getMember(this.botId())?.events.member?.getSender() ?? room.getDMInviter();
    const allow = this.config.allowFrom;
    const welcome = allow.length === 0 || allow.includes("*") || (inviter !== undefined && allow.includes(inviter));
    if (!welcome) {
      this.log.info("matrix invite ignored (inviter not in allowFrom)", { room: room.roomId, inviter });
      return;
    }
    await this.requireClient().joinRoom(room.roomId);
    this.log.info("matrix room joined", { room: room.roomId, inviter });
  }

  /** Rust crypto for `e2eeEnabled`; when it cannot start, the channel runs on and says what is lost. */
  private async startEncryption(sdk: Sdk, client: MatrixClient): Promise<void> {
    try {
      this.e2ee = await startE2ee(sdk, client);
      const id = await this.e2ee.identity();
      this.log.info("matrix end-to-end encryption ready (keys in memory; no cross-signing, verification or key backup)", { device: id.deviceId, ed25519: id.ed25519 });
    } catch (error) {
      this.log.warn("matrix end-to-end encryption could not start; encrypted rooms cannot be read", { error: errorMessage(error) });
    }
  }

  private async onEvent(event: MatrixEvent, room: Room): Promise<void> {
    if (event.isEncrypted() && event.getSender() !== this.botId() && !(await this.decrypted(event, room))) return;
    const client = this.requireClient();
    const input = await toGateInput(event, room, {
      channel: this.name,
      botId: this.botId(),
      groupPolicy: this.config.groupPolicy,
      groupAllowFrom: this.config.groupAllowFrom,
      allowRoomMentions: this.config.allowRoomMentions,
      maxMediaBytes: this.config.maxMediaBytes,
      mediaDir: join(this.deps.home, "media", this.name),
      isOwnMessage: (id) => this.own.has(id),
      download: (mxc, max) =>
        this.downloads.run(() =>
          downloadMedia(client, mxc, max).catch((error: unknown) => {
            this.log.warn("matrix attachment download failed", { mxc, error: errorMessage(error) });
            return undefined;
          }),
        ),
    });
    if (!input) return;
    const threadRoot = input.metadata?.threadRootEventId;
    if (typeof threadRoot === "string") this.rememberThread(event.getId()!, threadRoot);
    const outcome = await this.deps.gate.receive(input, async (text) => {
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => this.post(input.chatId, textContent(text)), classifyMatrixError);
    });
    if (outcome !== "forwarded") return;
    void this.typing.start(input.chatId);
  }

  /** Whether `event` can be read; an undecryptable one is logged, and answered with a notice in a direct chat. */
  private async decrypted(event: MatrixEvent, room: Room): Promise<boolean> {
    if (!this.e2ee) {
      if (!this.warnedEncrypted.has(room.roomId)) {
        this.warnedEncrypted.add(room.roomId);
        this.log.warn("matrix encrypted room: nanobot cannot read it (e2eeEnabled is off or encryption failed to start)", { room: room.roomId });
      }
      return false;
    }
    const result = await this.e2ee.decrypt(event);
    if (result.ok) return true;
    const sessionId = String(event.getWireContent().session_id ?? event.getId());
    this.log.warn("matrix message could not be decrypted", { room: room.roomId, sender: event.getSender(), event: event.getId(), reason: result.reason });
    // The room key may still arrive (a late to-device message): the SDK retries and the message is answered then.
    this.e2ee.onLateDecryption(event, () => {
      this.onEvent(event, room).catch((error: unknown) => this.log.error("matrix event failed", { error: errorMessage(error) }));
    });
    // Told in direct chats only: in a group the notice would answer people who did not address the bot.
    if (!isDirectRoom(room) || this.undecryptable.has(`${room.roomId}|${sessionId}`)) return false;
    this.undecryptable.add(`${room.roomId}|${sessionId}`);
    const note = "I could not decrypt your message: my device did not receive its room key. If this keeps happening, check that your client shares keys with unverified devices, or resend it.";
    const client = this.requireClient();
    await this.deps.delivery
      .withRetries(`${this.name}:undecryptable`, () => this.sendEvent(client, room.roomId, { ...textContent(note), msgtype: "m.notice" }), classifyMatrixError)
      .catch((error: unknown) => this.log.warn("matrix notice about an undecryptable message not sent", { error: errorMessage(error) }));
    return false;
  }

  /** Sends a room event, encrypted when the room is. */
  private async sendEvent(client: MatrixClient, roomId: string, content: RoomContent, txnId?: string): Promise<string> {
    if (this.e2ee && (await this.e2ee.isEncrypted(roomId))) {
      return sendContent(client, roomId, await this.e2ee.encrypt(roomId, "m.room.message", content), txnId, "m.room.encrypted");
    }
    return sendContent(client, roomId, content, txnId);
  }

  private rememberThread(eventId: string, root: string): void {
    this.threadOf.set(eventId, root);
    if (this.threadOf.size > 2_000) this.threadOf.delete(this.threadOf.keys().next().value!);
  }

  private async setTyping(roomId: string, typing: boolean): Promise<void> {
    const client = this.client;
    if (!client) return;
    // Best effort: a lost typing notice is not worth an error report.
    await client.sendTyping(roomId, typing, TYPING_TIMEOUT_MS).catch((error: unknown) => this.log.debug("typing failed", { error: errorMessage(error) }));
  }

  private async replied(roomId: string): Promise<void> {
    this.typing.stop(roomId);
    await this.setTyping(roomId, false);
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  private async post(roomId: string, content: Record<string, unknown>, txnId?: string): Promise<string> {
    const eventId = await this.sendEvent(this.requireClient(), roomId, content, txnId);
    this.own.add(eventId);
    return eventId;
  }

  /** Where a reply to `replyTo` goes: answering it, inside its thread if it was in one. */
  private placement(replyTo: string | undefined): Placement {
    if (!replyTo?.startsWith("$")) return {};
    const threadRoot = this.threadOf.get(replyTo);
    return { replyTo, ...(threadRoot ? { threadRoot } : {}) };
  }

  private async sendReply(roomId: string, id: string, content: string, media: MediaItem[] | undefined, replyTo: string | undefined): Promise<void> {
    const first = this.placement(replyTo);
    // Later parts stay in the thread but answer nobody in particular.
    const rest: Placement = first.threadRoot ? { threadRoot: first.threadRoot } : {};
    const chunks = splitMessage(content, MATRIX_TEXT_LIMIT);
    for (const [i, chunk] of chunks.entries()) {
      const key = this.key(id, i);
      await this.deps.delivery.deliver(key, () => this.post(roomId, textContent(chunk, i === 0 ? first : rest), txnIdFor(key)), classifyMatrixError);
    }
    for (const [i, item] of (media ?? []).entries()) {
      const key = this.key(id, `media${i}`);
      if (this.deps.delivery.isDelivered(key)) continue;
      const placement = chunks.length === 0 && i === 0 ? first : rest;
      const loaded = await loadFile(item, this.config.maxMediaBytes);
      const label = item.name ?? (item.path ? basename(item.path) : (item.url ?? "file"));
      if ("problem" in loaded) {
        this.log.warn("matrix attachment not sent", { file: label, problem: loaded.problem });
        const note = `[attachment: ${label} - ${loaded.problem === "too large" ? "too large" : "send failed"}]`;
        await this.deps.delivery.deliver(key, () => this.post(roomId, textContent(note, placement), txnIdFor(key)), classifyMatrixError);
        continue;
      }
      const client = this.requireClient();
      const upload = async (): Promise<string> => {
        if (!this.e2ee || !(await this.e2ee.isEncrypted(roomId))) return this.post(roomId, fileContent(loaded.file, await uploadFile(client, loaded.file), placement), txnIdFor(key));
        const { ciphertext, file } = encryptAttachment(loaded.file.data);
        const url = await uploadFile(client, loaded.file, ciphertext);
        return this.post(roomId, fileContent(loaded.file, { ...file, url }, placement), txnIdFor(key));
      };
      await this.deps.delivery.deliver(key, upload, classifyMatrixError);
    }
  }

  private onDelta(streamId: string, roomId: string, delta: string, replyTo: string | undefined): void {
    if (!this.config.streaming || this.ended.has(streamId)) return;
    let editor = this.streams.get(streamId);
    if (!editor) {
      this.typing.stop(roomId);
      editor = new StreamEditor<string>(
        {
          // Placed as the final reply would be: answering the asking event, inside its thread.
          post: (text) => this.post(roomId, textContent(text, this.placement(replyTo))),
          edit: async (ref, text) => {
            await this.sendEvent(this.requireClient(), roomId, editContent(ref, text));
          },
        },
        { intervalMs: this.config.streamEditIntervalMs, clock: this.deps.clock, previewLimit: MATRIX_TEXT_LIMIT, logger: this.log },
      );
      this.streams.set(streamId, editor);
    }
    editor.push(delta);
  }

  /** Turns the preview into the final text; further chunks follow as new messages. */
  private async onStreamEnd(streamId: string, roomId: string, id: string, content: string, replyTo: string | undefined): Promise<void> {
    const editor = this.streams.get(streamId);
    this.streams.delete(streamId);
    this.ended.add(streamId);
    const ref = editor ? (await editor.finish()).ref : undefined;
    if (ref === undefined) return this.sendReply(roomId, id, content, undefined, replyTo);
    const threadRoot = this.placement(replyTo).threadRoot;
    // Later parts stay in the thread but answer nobody in particular.
    const rest: Placement = threadRoot ? { threadRoot } : {};
    const client = this.requireClient();
    if (this.deps.delivery.isDelivered(this.key(id, 0))) {
      // A resumed turn re-streamed a reply that was already delivered: remove the extra preview.
      await client.redactEvent(roomId, ref).catch(() => undefined);
      return;
    }
    for (const [i, chunk] of splitMessage(content, MATRIX_TEXT_LIMIT).entries()) {
      const key = this.key(id, i);
      const send = (): Promise<string> => (i === 0 ? this.sendEvent(client, roomId, editContent(ref, chunk), txnIdFor(key)) : this.post(roomId, textContent(chunk, rest), txnIdFor(key)));
      await this.deps.delivery.deliver(key, send, classifyMatrixError);
    }
  }
}
