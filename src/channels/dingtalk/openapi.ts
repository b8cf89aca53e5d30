/**
 * DingTalk's HTTP APIs as the Python nanobot uses them: the app access token
 * (`/v1.0/oauth2/accessToken`), robot sends to a user (`/v1.0/robot/oToMessages/batchSend`) or
 * a group (`/v1.0/robot/groupMessages/send`), message file downloads
 * (`/v1.0/robot/messageFiles/download`) and media uploads (`/media/upload` on the legacy API
 * host), plus the per-message `sessionWebhook`. The stream SDK covers only the receiving side.
 */
import type { ChannelClock } from "../clock.js";
import type { RetryDecision } from "../delivery/delivery-queue.js";

/** A DingTalk API answer that was not a success: the HTTP status and DingTalk's own code. */
export class DingTalkApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(what: string, status: number, code: string, detail: string) {
    super(`DingTalk ${what} failed: HTTP ${status}${code ? ` ${code}` : ""}${detail ? ` — ${detail}` : ""}`);
    this.name = "DingTalkApiError";
    this.status = status;
    this.code = code;
  }
}

/** 5xx, 429 and DingTalk's QPS limits are worth a retry; a network failure too; other 4xx are not. */
export function classifyDingTalkError(error: unknown): RetryDecision {
  if (error instanceof DingTalkApiError) {
    if (error.status >= 500 || error.status === 429) return { retryable: true };
    // An expired token is dropped by the client before the error surfaces; the retry gets a new one.
    if (error.status === 401) return { retryable: true };
    return { retryable: /QpsLimit|Throttling/i.test(error.code) };
  }
  return { retryable: true };
}

export interface DingTalkApiOptions {
  clientId: string;
  clientSecret: string;
  apiRoot: string;
  oapiRoot: string;
  clock: ChannelClock;
}

/** A robot message: `msgKey` names the template, `msgParam` its fields (DingTalk wants them as a JSON string). */
export interface RobotMessage {
  msgKey: "sampleMarkdown" | "sampleText" | "sampleImageMsg" | "sampleFile";
  msgParam: Record<string, string>;
}

const GROUP_PREFIX = "group:";

/** Chat ids as the Python nanobot writes them: a user's staff id, or `group:<openConversationId>`. */
export function isGroupChat(chatId: string): boolean {
  return chatId.startsWith(GROUP_PREFIX);
}

export function groupChatId(conversationId: string): string {
  return `${GROUP_PREFIX}${conversationId}`;
}

export class DingTalkApi {
  private readonly options: DingTalkApiOptions;
  private token: { value: string; expiresAt: number } | undefined;
  private pendingToken: Promise<string> | undefined;

  constructor(options: DingTalkApiOptions) {
    this.options = options;
  }

  /** The app access token, fetched again a minute before it expires. */
  async accessToken(): Promise<string> {
    const now = this.options.clock.now();
    if (this.token && now < this.token.expiresAt) return this.token.value;
    this.pendingToken ??= this.fetchToken().finally(() => {
      this.pendingToken = undefined;
    });
    return this.pendingToken;
  }

  private async fetchToken(): Promise<string> {
    const { clientId, clientSecret, apiRoot } = this.options;
    const body = await this.json("access token", `${apiRoot}/v1.0/oauth2/accessToken`, { appKey: clientId, appSecret: clientSecret }, false);
    const value = typeof body.accessToken === "string" ? body.accessToken : "";
    if (!value) throw new DingTalkApiError("access token", 200, "", "the answer has no accessToken");
    const expireIn = typeof body.expireIn === "number" ? body.expireIn : 7200;
    this.token = { value, expiresAt: this.options.clock.now() + Math.max(0, expireIn - 60) * 1000 };
    return value;
  }

  /** Sends to a user (batchSend) or a group (`group:` chat ids). */
  async sendRobotMessage(chatId: string, message: RobotMessage): Promise<void> {
    const { apiRoot, clientId } = this.options;
    const common = { robotCode: clientId, msgKey: message.msgKey, msgParam: JSON.stringify(message.msgParam) };
    if (isGroupChat(chatId)) {
      await this.json("group message send", `${apiRoot}/v1.0/robot/groupMessages/send`, { ...common, openConversationId: chatId.slice(GROUP_PREFIX.length) });
    } else {
      await this.json("direct message send", `${apiRoot}/v1.0/robot/oToMessages/batchSend`, { ...common, userIds: [chatId] });
    }
  }

  /** Answers through a message's session webhook: markdown, optionally @-ing users (a real notification). */
  async sendBySession(webhook: string, title: string, text: string, atUserIds: string[] = []): Promise<void> {
    const payload: Record<string, unknown> = { msgtype: "markdown", markdown: { title, text } };
    if (atUserIds.length) payload.at = { atUserIds, isAtAll: false };
    await this.json("session webhook send", webhook, payload);
  }

  /** Turns a message's `downloadCode` into bytes (two steps: a temporary URL, then the file). */
  async download(downloadCode: string): Promise<{ data: Uint8Array; contentType: string | undefined }> {
    const { apiRoot, clientId } = this.options;
    const body = await this.json("file download", `${apiRoot}/v1.0/robot/messageFiles/download`, { downloadCode, robotCode: clientId });
    const url = typeof body.downloadUrl === "string" ? body.downloadUrl : "";
    if (!url) throw new DingTalkApiError("file download", 200, "", "the answer has no downloadUrl");
    const response = await fetch(url);
    if (!response.ok) throw new DingTalkApiError("file download", response.status, "", await response.text().catch(() => ""));
    return { data: new Uint8Array(await response.arrayBuffer()), contentType: response.headers.get("content-type") ?? undefined };
  }

  /** Uploads a file for a robot message; returns its media id. */
  async upload(type: "image" | "voice" | "video" | "file", name: string, data: Uint8Array, contentType: string): Promise<string> {
    const token = await this.accessToken();
    const form = new FormData();
    form.append("media", new Blob([data], { type: contentType }), name);
    const url = `${this.options.oapiRoot}/media/upload?access_token=${encodeURIComponent(token)}&type=${type}`;
    const response = await fetch(url, { method: "POST", body: form });
    const body = await readBody(response);
    const errcode = body.errcode;
    if (!response.ok || (errcode !== undefined && errcode !== 0)) {
      this.dropTokenOn(response.status);
      throw new DingTalkApiError("media upload", response.ok ? 400 : response.status, String(errcode ?? body.code ?? ""), String(body.errmsg ?? body.message ?? ""));
    }
    const mediaId = body.media_id ?? body.mediaId;
    if (typeof mediaId !== "string" || !mediaId) throw new DingTalkApiError("media upload", 200, "", "the answer has no media_id");
    return mediaId;
  }

  private dropTokenOn(status: number): void {
    if (status === 401) this.token = undefined;
  }

  private async json(what: string, url: string, payload: unknown, authorized = true): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (authorized) headers["x-acs-dingtalk-access-token"] = await this.accessToken();
    const response = await fetch(url, { method: "POST", headers, body: JSON.stringify(payload) });
    const body = await readBody(response);
    if (!response.ok) {
      this.dropTokenOn(response.status);
      throw new DingTalkApiError(what, response.status, String(body.code ?? body.errcode ?? ""), String(body.message ?? body.errmsg ?? ""));
    }
    // The legacy-style answers (session webhook) report failure in the body with HTTP 200.
    if (typeof body.errcode === "number" && body.errcode !== 0) throw new DingTalkApiError(what, 400, String(body.errcode), String(body.errmsg ?? ""));
    return body;
  }
}

async function readBody(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text().catch(() => "");
  if (!text) return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return { message: text.slice(0, 200) };
  }
}
