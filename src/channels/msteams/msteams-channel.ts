/**
 * Microsoft Teams through the Bot Framework (botbuilder / botframework-connector). The Bot
 * Connector POSTs activities to the bot's messaging endpoint (`webhook-server.ts`); botbuilder
 * checks each request's JWT against the Bot Framework's OpenID keys (issuer, audience = appId,
 * signature, serviceUrl claim). Replies go out through the SDK's ConnectorClient to the
 * conversation's serviceUrl: sends, threaded replies (`replyToId`), edits for streaming, typing
 * activities, inline images, other files by the file-consent flow of personal chats
 * (`file-consent.ts`). Personal chats are direct messages; group chats and channels answer
 * @mentions and replies (`groupPolicy`). botbuilder is loaded when the channel starts.
 */
import { join } from "node:path";
import type { ConnectorClient } from "botframework-connector";
import type { Activity } from "botframework-schema";
import type { MediaItem, OutboundMessage } from "../../bus/types.js";
import { errorMessage } from "../../core/errors.js";
import type { Logger } from "../../core/logger.js";
import { LruSet } from "../delivery/lru-set.js";
import { splitMessage } from "../delivery/split-message.js";
import { StreamEditor } from "../delivery/stream-editor.js";
import { TypingKeeper } from "../delivery/typing-keeper.js";
import type { Channel, ChannelConnection, ChannelDeps } from "../types.js";
import type { MSTeamsConfig } from "./config.js";
import { ConversationRefs } from "./conversation-refs.js";
import type { ConversationRef } from "./conversation-refs.js";
import type { ClientSecretCredentials } from "./credentials.js";
import { TeamsTokenError, UntrustedServiceUrlError } from "./errors.js";
import { PendingUploads, consentCard, fileInfoCard, readConsentAnswer, uploadToSession } from "./file-consent.js";
import type { ConsentAnswer } from "./file-consent.js";
import { toGateInput } from "./inbound.js";
import type { TeamsActivity } from "./inbound.js";
import { TEAMS_TEXT_LIMIT, classifyTeamsError, inlineAttachment, loadFile } from "./send.js";
import { isTrustedServiceUrl } from "./trusted-hosts.js";
import { WebhookServer } from "./webhook-server.js";

export interface MSTeamsChannelOptions extends ChannelDeps {
  config: MSTeamsConfig;
  name?: string;
}

/** An attachment of an outgoing activity (inline image, consent card, file-info card). */
interface OutgoingAttachment {
  contentType: string;
  name: string;
  contentUrl?: string;
  content?: Record<string, unknown>;
}

/** What botbuilder's authentication object offers that the channel uses. */
interface RequestAuthenticator {
  authenticateRequest(activity: Activity, authHeader: string): Promise<unknown>;
}

export class MSTeamsChannel implements Channel {
  readonly name: string;
  private readonly config: MSTeamsConfig;
  private readonly deps: ChannelDeps;
  private readonly log: Logger;
  private readonly refs: ConversationRefs;
  private credentials: ClientSecretCredentials | undefined;
  private auth: RequestAuthenticator | undefined;
  private server: WebhookServer | undefined;
  private createConnector: ((credentials: ClientSecretCredentials, serviceUrl: string) => ConnectorClient) | undefined;
  private readonly connectors = new Map<string, ConnectorClient>();
  private readonly streams = new Map<string, StreamEditor<string>>();
  /** Streams already finished: a late delta must not open a second preview. */
  private readonly ended = new LruSet(1_000);
  /** Ids of activities this bot sent: a reply to one of them addresses the bot. */
  private readonly own = new LruSet(5_000);
  private readonly typing: TypingKeeper;
  /** Files offered by consent cards, waiting for the user's answer. */
  private readonly uploads = new PendingUploads();
  /** Inbound activities are handled one at a time, in arrival order, after the 200 went out. */
  private inbound: Promise<void> = Promise.resolve();
  private connection: ChannelConnection = { connected: false };

  constructor(options: MSTeamsChannelOptions) {
    this.name = options.name ?? "msteams";
    this.config = options.config;
    this.deps = options;
    this.log = options.logger.child({ channel: this.name });
    this.refs = new ConversationRefs({
      home: options.home,
      channel: this.name,
      ttlDays: this.config.refTtlDays,
      pruneWebChat: this.config.pruneWebChatRefs,
      pruneNonPersonal: this.config.pruneNonPersonalRefs,
      touchIntervalMs: this.config.refTouchIntervalS * 1000,
      isTrusted: (url) => this.trusted(url),
      now: () => options.clock.now(),
    });
    // Teams shows a typing activity for about three seconds.
    this.typing = new TypingKeeper({
      clock: options.clock,
      refreshMs: 3000,
      send: async (chatId) => {
        // Best effort: a lost typing indicator is not worth an error report.
        await this.connectorFor(chatId)
          .then(({ connector, ref }) => connector.conversations.sendToConversation(ref.conversationId, { type: "typing" }))
          .catch((error: unknown) => this.log.debug("typing failed", { error: errorMessage(error) }));
      },
    });
  }

  status(): ChannelConnection {
    return { ...this.connection };
  }

  /** The messaging endpoint's URL as bound (tests and logs). */
  endpoint(): string | undefined {
    return this.server?.url();
  }

  async start(signal: AbortSignal): Promise<void> {
    if (this.server) return;
    const [{ ConfigurationBotFrameworkAuthentication }, { AuthenticationConstants }, credentialsModule, connectorModule] = await Promise.all([
      import("botbuilder"),
      import("botframework-connector"),
      import("./credentials.js"),
      import("./connector.js"),
    ]);
    const settings = `channels.${this.name}`;
    const credentials = new credentialsModule.ClientSecretCredentials({
      appId: this.config.appId,
      appPassword: this.config.appPassword,
      tenantId: this.config.tenantId,
      loginUrl: this.config.loginUrl,
      passwordKey: `${settings}.appPassword`,
    });
    this.credentials = credentials;
    this.createConnector = connectorModule.createConnector;
    // Setting one endpoint makes botbuilder expect all of them: the public cloud's, but the
    // OpenID metadata URL (`openIdMetadataUrl`) and the login URL (`loginUrl`) from the config.
    this.auth = new ConfigurationBotFrameworkAuthentication(
      {
        MicrosoftAppId: this.config.appId,
        ...(this.config.tenantId ? { MicrosoftAppTenantId: this.config.tenantId } : {}),
        ValidateAuthority: true,
        ToChannelFromBotLoginUrl: credentials.tokenUrl().replace(/\/oauth2\/v2\.0\/token$/, ""),
        ToChannelFromBotOAuthScope: AuthenticationConstants.ToChannelFromBotOAuthScope,
        ToBotFromChannelTokenIssuer: AuthenticationConstants.ToBotFromChannelTokenIssuer,
        OAuthUrl: AuthenticationConstants.OAuthUrl,
        ToBotFromChannelOpenIdMetadataUrl: this.config.openIdMetadataUrl,
        ToBotFromEmulatorOpenIdMetadataUrl: AuthenticationConstants.ToBotFromEmulatorOpenIdMetadataUrl,
        CallerId: "urn:botframework:azure",
      },
      new credentialsModule.ClientSecretCredentialsFactory(credentials),
    );
    await this.refs.load();
    if (!this.config.validateInboundAuth) this.log.warn(`${settings}.validateInboundAuth is false: inbound requests are not authenticated`);
    const server = new WebhookServer({
      host: this.config.host,
      port: this.config.port,
      path: this.config.path,
      settingsPath: settings,
      onActivity: (authorization, activity) => this.onRequest(authorization, activity),
      onError: (error) => this.log.error("teams webhook failed", { error: errorMessage(error) }),
    });
    await server.listen();
    this.server = server;
    if (signal.aborted) {
      await this.stop();
      throw new Error("msteams start aborted");
    }
    // The app token proves appId/appPassword now rather than at the first reply.
    try {
      await credentials.getToken(true);
      this.setConnected(true);
    } catch (error) {
      if (error instanceof TeamsTokenError && (error.status === 400 || error.status === 401)) {
        await this.stop();
        this.connection = { connected: false, lastError: error.message };
        throw error;
      }
      // The authority is unreachable: keep listening; sends retry and report.
      this.setConnected(false, errorMessage(error));
    }
    this.log.info("teams webhook listening", { url: server.url() });
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    this.typing.stopAll();
    for (const editor of this.streams.values()) await editor.finish();
    this.streams.clear();
    await server.close();
    await this.inbound;
    this.connection = { ...this.connection, connected: false };
  }

  async send(message: OutboundMessage): Promise<void> {
    switch (message.kind) {
      case "message":
        await this.sendReply(message.chatId, message.id, message.content, message.media, message.replyTo);
        return this.typing.stop(message.chatId);
      case "delta":
        return this.onDelta(message.streamId, message.chatId, message.delta, message.replyTo);
      case "stream_end":
        await this.onStreamEnd(message.streamId, message.chatId, message.id, message.content, message.replyTo);
        return this.typing.stop(message.chatId);
      case "progress":
        if (!this.config.sendProgress) return;
        await this.deps.delivery.withRetries(`${this.name}:progress`, () => this.post(message.chatId, message.text, this.threadTarget(message.chatId, message.replyTo)), (e) => this.classify(e));
        return;
      case "typing":
        return this.typing.start(message.chatId);
    }
  }

  private trusted(serviceUrl: string): boolean {
    return isTrustedServiceUrl(serviceUrl, this.config.trustedServiceUrlHosts);
  }

  private setConnected(connected: boolean, lastError?: string): void {
    this.connection = { connected, ...(lastError ? { lastError } : this.connection.lastError ? { lastError: this.connection.lastError } : {}) };
    if (lastError) this.log.warn("teams connector problem", { error: lastError });
  }

  /** Failures of the token endpoint or the connector mark the channel disconnected until a send works. */
  private classify(error: unknown): ReturnType<typeof classifyTeamsError> {
    const decision = classifyTeamsError(error);
    if (decision.retryable) this.setConnected(false, errorMessage(error));
    return decision;
  }

  /** Authenticates, answers the Connector at once, handles the activity afterwards. */
  private async onRequest(authorization: string, activity: Record<string, unknown>): Promise<number> {
    if (this.config.validateInboundAuth) {
      try {
        await this.auth!.authenticateRequest(activity as unknown as Activity, authorization);
      } catch (error) {
        const status = (error as { statusCode?: unknown }).statusCode;
        this.log.warn("teams request refused", { error: errorMessage(error) });
        // The signing keys could not be fetched: the Connector retries a 5xx.
        return typeof status === "number" && status >= 500 ? 503 : 401;
      }
    }
    const serviceUrl = typeof activity.serviceUrl === "string" ? activity.serviceUrl : "";
    if (!this.trusted(serviceUrl)) {
      this.log.warn("teams activity with an untrusted serviceUrl ignored", { serviceUrl, setting: `channels.${this.name}.trustedServiceUrlHosts` });
      return 200;
    }
    this.inbound = this.inbound
      .then(() => this.onActivity(activity as TeamsActivity, serviceUrl))
      .catch((error: unknown) => this.log.error("teams message failed", { error: errorMessage(error) }));
    return 200;
  }

  private async onActivity(activity: TeamsActivity, serviceUrl: string): Promise<void> {
    const answer = readConsentAnswer(activity as Record<string, unknown>);
    if (answer) return this.onConsentAnswer(answer, activity.conversation?.id ?? "");
    const input = await toGateInput(activity, {
      channel: this.name,
      groupPolicy: this.config.groupPolicy,
      mentionOnlyResponse: this.config.mentionOnlyResponse,
      mediaDir: join(this.deps.home, "media", this.name),
      isOwnMessage: (id) => this.own.has(id),
      download: (url, connector) => this.download(url, connector),
      onDownloadError: (error) => this.log.warn("teams attachment download failed", { error: errorMessage(error) }),
    });
    if (!input) return;
    await this.refs.remember({
      serviceUrl,
      conversationId: input.chatId,
      activityId: activity.id!,
      conversationType: String(input.metadata?.conversationType ?? ""),
      ...(typeof input.metadata?.tenantId === "string" ? { tenantId: input.metadata.tenantId } : {}),
    });
    const outcome = await this.deps.gate.receive(input, async (text) => {
      await this.deps.delivery.withRetries(`${this.name}:pairing`, () => this.post(input.chatId, text), (e) => this.classify(e));
    });
    if (outcome === "forwarded") void this.typing.start(input.chatId);
  }

  /** The Connector's own attachment URLs need the bot's token; it is never sent to other hosts or to file links. */
  private async download(url: string, connector: boolean): Promise<Response> {
    const headers: Record<string, string> = {};
    if (connector && this.trusted(url) && this.credentials) headers.authorization = `Bearer ${await this.credentials.getToken()}`;
    return fetch(url, { headers, signal: AbortSignal.timeout(60_000) });
  }

  private async connectorFor(chatId: string): Promise<{ connector: ConnectorClient; ref: ConversationRef }> {
    if (!this.credentials || !this.createConnector) throw new Error(`${this.name}: channel not started`);
    const ref = this.refs.get(chatId) ?? { serviceUrl: this.config.serviceUrl, conversationId: chatId, updatedAt: 0 };
    if (!this.trusted(ref.serviceUrl)) {
      throw new UntrustedServiceUrlError(`${this.name}: serviceUrl ${ref.serviceUrl} of conversation ${chatId} is not in channels.${this.name}.trustedServiceUrlHosts`);
    }
    let connector = this.connectors.get(ref.serviceUrl);
    if (!connector) {
      connector = this.createConnector(this.credentials, ref.serviceUrl);
      this.connectors.set(ref.serviceUrl, connector);
    }
    return { connector, ref };
  }

  private async post(chatId: string, text: string, replyTo?: string, attachments: OutgoingAttachment[] = []): Promise<string> {
    const { connector, ref } = await this.connectorFor(chatId);
    const activity = {
      type: "message",
      text,
      textFormat: "markdown",
      ...(attachments.length ? { attachments } : {}),
    };
    const sent = replyTo
      ? await connector.conversations.replyToActivity(ref.conversationId, replyTo, { ...activity, replyToId: replyTo })
      : await connector.conversations.sendToConversation(ref.conversationId, activity);
    this.setConnected(true);
    if (sent.id) this.own.add(sent.id);
    void this.refs.touch(chatId).catch(() => undefined);
    return sent.id ?? "";
  }

  private async edit(chatId: string, id: string, text: string): Promise<void> {
    const { connector, ref } = await this.connectorFor(chatId);
    await connector.conversations.updateActivity(ref.conversationId, id, { type: "message", id, text, textFormat: "markdown" });
  }

  /** The explicit `replyTo`, else (with `replyInThread`) the conversation's last user message. */
  private threadTarget(chatId: string, replyTo: string | undefined): string | undefined {
    if (replyTo) return replyTo;
    if (!this.config.replyInThread) return undefined;
    return this.refs.get(chatId)?.activityId;
  }

  private key(id: string, part: string | number): string {
    return `${this.name}:${id}#${part}`;
  }

  private async sendReply(chatId: string, id: string, content: string, media: MediaItem[] | undefined, replyTo: string | undefined): Promise<void> {
    const threadTo = this.threadTarget(chatId, replyTo);
    const chunks = splitMessage(content, TEAMS_TEXT_LIMIT);
    for (const [i, chunk] of chunks.entries()) {
      await this.deps.delivery.deliver(this.key(id, i), () => this.post(chatId, chunk, i === 0 ? threadTo : undefined), (e) => this.classify(e));
    }
    for (const [i, item] of (media ?? []).entries()) {
      const key = this.key(id, `media${i}`);
      if (this.deps.delivery.isDelivered(key)) continue;
      const file = await loadFile(item);
      const label = item.name ?? item.path ?? item.url ?? "file";
      if (!file) {
        this.log.warn("teams attachment unreadable, sending a note instead", { file: label });
        await this.deps.delivery.deliver(key, () => this.post(chatId, `[attachment: ${label} - send failed]`), (e) => this.classify(e));
        continue;
      }
      const to = chunks.length === 0 && i === 0 ? threadTo : undefined;
      let attachment: OutgoingAttachment | undefined;
      if (file.contentType.startsWith("image/")) attachment = inlineAttachment(file);
      else if (this.isPersonalChat(chatId)) {
        // Teams shows other files only after the user lets the bot put them in their OneDrive.
        const uploadId = this.uploads.add({ chatId, path: item.path!, name: file.name, mimeType: file.contentType });
        attachment = consentCard(file, uploadId);
      }
      if (!attachment) {
        this.log.info("teams files other than images go out in personal chats only, sending a note", { file: file.name });
        const note = `[file not sent: ${file.name} - Teams lets a bot send files only in a personal chat; ask me there]`;
        await this.deps.delivery.deliver(key, () => this.post(chatId, note, to), (e) => this.classify(e));
        continue;
      }
      const card = attachment;
      await this.deps.delivery.deliver(key, () => this.post(chatId, "", to, [card]), (e) => this.classify(e));
    }
  }

  /** Personal chats are the only conversations where Teams lets a bot upload files. */
  private isPersonalChat(chatId: string): boolean {
    const type = this.refs.get(chatId)?.conversationType;
    // Teams' personal conversation ids start with "a:"; group chats and channels with "19:".
    return type ? type === "personal" : chatId.startsWith("a:");
  }

  /** The user answered a consent card: upload the file and show it, or say it was not sent. */
  private async onConsentAnswer(answer: ConsentAnswer, chatId: string): Promise<void> {
    const pending = this.uploads.take(answer.uploadId, chatId);
    const say = (text: string): Promise<unknown> => this.deps.delivery.withRetries(`${this.name}:file`, () => this.post(chatId, text), (e) => this.classify(e));
    if (!pending) {
      this.log.info("teams consent answer for a file no longer offered", { chat: chatId });
      await say("That file is no longer available; please ask me again.");
      return;
    }
    // The card has done its job; a second click on it could not be served.
    if (answer.cardId) {
      const cardId = answer.cardId;
      await this.connectorFor(chatId)
        .then(({ connector, ref }) => connector.conversations.deleteActivity(ref.conversationId, cardId))
        .catch((error: unknown) => this.log.debug("teams consent card not removed", { error: errorMessage(error) }));
    }
    if (answer.action === "decline") {
      await say(`Okay, I did not send ${pending.name}.`);
      return;
    }
    const info = answer.uploadInfo;
    const file = info ? await loadFile({ kind: "document", path: pending.path, name: pending.name, mimeType: pending.mimeType }) : undefined;
    if (!info || !file) {
      this.log.warn("teams file upload impossible", { file: pending.name, reason: info ? "file unreadable" : "no upload URL in the consent answer" });
      await say(`[attachment: ${pending.name} - send failed]`);
      return;
    }
    try {
      await this.deps.delivery.withRetries(`${this.name}:upload`, () => uploadToSession(info.uploadUrl, file.data), classifyTeamsError);
    } catch (error) {
      this.log.warn("teams file upload failed", { file: pending.name, error: errorMessage(error) });
      await say(`[attachment: ${pending.name} - send failed]`);
      return;
    }
    await this.deps.delivery.withRetries(`${this.name}:file`, () => this.post(chatId, "", undefined, [fileInfoCard(info)]), (e) => this.classify(e));
  }

  private onDelta(streamId: string, chatId: string, delta: string, replyTo: string | undefined): void {
    if (!this.config.streaming || this.ended.has(streamId)) return;
    let editor = this.streams.get(streamId);
    if (!editor) {
      this.typing.stop(chatId);
      // The preview goes where the final reply would: the asking message's thread.
      const threadTo = this.threadTarget(chatId, replyTo);
      editor = new StreamEditor<string>(
        { post: (text) => this.post(chatId, text, threadTo), edit: (ref, text) => this.edit(chatId, ref, text) },
        { intervalMs: this.config.streamEditIntervalMs, clock: this.deps.clock, previewLimit: TEAMS_TEXT_LIMIT, logger: this.log },
      );
      this.streams.set(streamId, editor);
    }
    editor.push(delta);
  }

  /** Turns the preview into the final text; further chunks follow as new messages. */
  private async onStreamEnd(streamId: string, chatId: string, id: string, content: string, replyTo: string | undefined): Promise<void> {
    const editor = this.streams.get(streamId);
    this.streams.delete(streamId);
    this.ended.add(streamId);
    const ref = editor ? (await editor.finish()).ref : undefined;
    if (ref === undefined) return this.sendReply(chatId, id, content, undefined, replyTo);
    if (this.deps.delivery.isDelivered(this.key(id, 0))) {
      // A resumed turn re-streamed a reply that was already delivered: remove the extra preview.
      await this.connectorFor(chatId)
        .then(({ connector, ref: conv }) => connector.conversations.deleteActivity(conv.conversationId, ref))
        .catch(() => undefined);
      return;
    }
    for (const [i, chunk] of splitMessage(content, TEAMS_TEXT_LIMIT).entries()) {
      const send = async (): Promise<void> => {
        if (i === 0) await this.edit(chatId, ref, chunk);
        else await this.post(chatId, chunk);
      };
      await this.deps.delivery.deliver(this.key(id, i), send, (e) => this.classify(e));
    }
  }
}
