/**
 * QQ's official bot OpenAPI over fetch: the app access token (`POST tokenUrl` with appId and
 * clientSecret, renewed a minute before it expires), `GET /gateway`, messages to users and
 * groups (`/v2/users/{openid}/messages`, `/v2/groups/{group_openid}/messages`) and rich-media
 * uploads (`…/files`). No maintained Node SDK lets these URLs be changed (qq-official-bot
 * hard-codes them), so the channel speaks the API itself.
 */
import type { RetryDecision } from "../delivery/delivery-queue.js";
import type { ChannelClock } from "../clock.js";

export class QQApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: number,
  ) {
    super(message);
    this.name = "QQApiError";
  }
}

export function classifyQQError(error: unknown): RetryDecision {
  if (error instanceof QQApiError) return { retryable: error.status >= 500 || error.status === 429 };
  // Anything else is the network (connection refused, reset, timed out).
  return { retryable: true };
}

export interface QQApiOptions {
  appId: string;
  secret: string;
  apiBase: string;
  tokenUrl: string;
  clock: ChannelClock;
}

export class QQApi {
  private token: { value: string; expiresAt: number } | undefined;

  constructor(private readonly options: QQApiOptions) {}

  /** The access token, fetched again a minute before it expires. */
  async accessToken(): Promise<string> {
    const now = this.options.clock.now();
    if (this.token && now < this.token.expiresAt - 60_000) return this.token.value;
    const response = await fetch(this.options.tokenUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ appId: this.options.appId, clientSecret: this.options.secret }),
    });
    const body = (await response.json().catch(() => ({}))) as { access_token?: string; expires_in?: string | number; message?: string; code?: number };
    if (!response.ok || !body.access_token) {
      throw new QQApiError(`access token refused (HTTP ${response.status}${body.message ? `: ${body.message}` : ""}); check appId and secret`, response.status || 401, body.code);
    }
    this.token = { value: body.access_token, expiresAt: now + Number(body.expires_in ?? 7200) * 1000 };
    return body.access_token;
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const token = await this.accessToken();
    const response = await fetch(`${this.options.apiBase}${path}`, {
      method,
      headers: { Authorization: `QQBot ${token}`, "X-Union-Appid": this.options.appId, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const parsed = (text ? JSON.parse(text) : {}) as T & { code?: number; message?: string };
    if (!response.ok) throw new QQApiError(`${method} ${path}: HTTP ${response.status}${parsed.message ? ` ${parsed.message}` : ""}`, response.status, parsed.code);
    return parsed;
  }
}

/** Where a chat's messages go: a user (C2C) or a group. */
export type ChatKind = "user" | "group";

export function messagesPath(kind: ChatKind, openid: string): string {
  return kind === "group" ? `/v2/groups/${openid}/messages` : `/v2/users/${openid}/messages`;
}

export function filesPath(kind: ChatKind, openid: string): string {
  return kind === "group" ? `/v2/groups/${openid}/files` : `/v2/users/${openid}/files`;
}
