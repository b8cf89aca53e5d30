/**
 * The iLink bot HTTP API behind personal WeChat bots (`ilinkai.weixin.qq.com`): JSON over POST
 * (GET for the QR status), a fresh random `X-WECHAT-UIN` per request, the bot token as
 * `Authorization: Bearer …`, and `base_info` naming the client in every body. Failures come as
 * `ret` / `errcode` in an HTTP 200 body: -2 means the context token may not send more, -14 that
 * the bot token is stale and the account must scan a new QR code.
 */
import { randomBytes } from "node:crypto";
import { packageVersion } from "../../core/version.js";
import type { RetryDecision } from "../delivery/delivery-queue.js";

/** The protocol version nanobot speaks (the reference plugin's channel version). */
export const CHANNEL_VERSION = "2.4.6";
const APP_ID = "bot";
/** The version as 0x00MMNNPP, as the server expects it. */
export const CLIENT_VERSION = CHANNEL_VERSION.split(".").reduce((acc, part) => (acc << 8) | (Number(part) & 0xff), 0);

export const ERR_CONTEXT_RESTRICTED = -2;
export const ERR_INVALID_ARGUMENT = -3;
export const ERR_STALE_TOKEN = -14;

export function baseInfo(): Record<string, string> {
  return { channel_version: CHANNEL_VERSION, bot_agent: `nanobot/${packageVersion()} (typescript)` };
}

/** A refused request; `retryable` says whether sending it again may help. */
export class WeixinApiError extends Error {
  constructor(
    readonly endpoint: string,
    message: string,
    readonly options: { status?: number; code?: number; retryable: boolean },
  ) {
    super(`WeChat ${endpoint}: ${message}`);
    this.name = "WeixinApiError";
  }
}

/** The context token cannot send more right now (expired, or its quota used up). */
export class WeixinQuotaError extends WeixinApiError {
  override name = "WeixinQuotaError";
}

/** The bot token is stale: `nanobot channels login weixin --force` must scan a new QR code. */
export class WeixinAuthError extends WeixinApiError {
  override name = "WeixinAuthError";
}

export function classifyWeixinError(error: unknown): RetryDecision {
  if (error instanceof WeixinApiError) return { retryable: error.options.retryable };
  // Anything else is the network (refused, reset, timed out).
  return { retryable: true };
}

function retryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

function asInt(value: unknown): number {
  const n = typeof value === "number" ? value : Number(value ?? 0);
  return Number.isFinite(n) ? Math.trunc(n) : 0;
}

/** Throws the error a `ret` / `errcode` body stands for; returns the body when both are 0. */
export function checkBody(endpoint: string, body: Record<string, unknown>): Record<string, unknown> {
  const ret = asInt(body.ret);
  const errcode = asInt(body.errcode);
  if (ret === 0 && errcode === 0) return body;
  const code = errcode || ret;
  const text = typeof body.errmsg === "string" && body.errmsg ? body.errmsg : "no error message";
  if (ret === ERR_CONTEXT_RESTRICTED || errcode === ERR_CONTEXT_RESTRICTED) {
    throw new WeixinQuotaError(endpoint, `context token expired or its quota is used up (code ${code}: ${text})`, { code, retryable: false });
  }
  if (ret === ERR_STALE_TOKEN || errcode === ERR_STALE_TOKEN) {
    throw new WeixinAuthError(endpoint, `bot token is stale (code ${code}: ${text}); run \`nanobot channels login weixin --force\``, { code, retryable: false });
  }
  throw new WeixinApiError(endpoint, `code ${code}: ${text}`, { code, retryable: false });
}

export interface WeixinApiOptions {
  baseUrl: string;
  token?: string;
  routeTag?: string | number | null;
}

export class WeixinApi {
  constructor(private options: WeixinApiOptions) {}

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  get token(): string {
    return this.options.token ?? "";
  }

  setToken(token: string): void {
    this.options = { ...this.options, token };
  }

  headers(auth = true): Record<string, string> {
    const uin = randomBytes(4).readUInt32BE(0);
    const headers: Record<string, string> = {
      "X-WECHAT-UIN": Buffer.from(String(uin)).toString("base64"),
      "Content-Type": "application/json",
      AuthorizationType: "ilink_bot_token",
      "iLink-App-Id": APP_ID,
      "iLink-App-ClientVersion": String(CLIENT_VERSION),
    };
    if (auth && this.options.token) headers.Authorization = `Bearer ${this.options.token}`;
    const tag = this.options.routeTag;
    if (tag !== undefined && tag !== null && String(tag).trim()) headers.SKRouteTag = String(tag).trim();
    return headers;
  }

  /** POSTs `body` (with `base_info` unless `bare`) and returns the JSON object, unchecked. */
  async post(endpoint: string, body: Record<string, unknown>, opts: { auth?: boolean; bare?: boolean; timeoutMs?: number; signal?: AbortSignal; baseUrl?: string } = {}): Promise<Record<string, unknown>> {
    const payload = opts.bare || "base_info" in body ? body : { ...body, base_info: baseInfo() };
    return this.request("POST", endpoint, { ...opts, body: JSON.stringify(payload) });
  }

  async get(endpoint: string, query: Record<string, string>, opts: { auth?: boolean; timeoutMs?: number; signal?: AbortSignal; baseUrl?: string } = {}): Promise<Record<string, unknown>> {
    const search = new URLSearchParams(query).toString();
    return this.request("GET", `${endpoint}${search ? (endpoint.includes("?") ? "&" : "?") + search : ""}`, opts);
  }

  private async request(method: string, endpoint: string, opts: { auth?: boolean; body?: string; timeoutMs?: number; signal?: AbortSignal; baseUrl?: string }): Promise<Record<string, unknown>> {
    const name = endpoint.replace(/^ilink\/bot\//, "").replace(/\?.*$/, "");
    const signals = [AbortSignal.timeout(opts.timeoutMs ?? 15_000), ...(opts.signal ? [opts.signal] : [])];
    const response = await fetch(`${(opts.baseUrl ?? this.options.baseUrl).replace(/\/+$/, "")}/${endpoint}`, {
      method,
      headers: this.headers(opts.auth !== false),
      signal: AbortSignal.any(signals),
      ...(opts.body !== undefined ? { body: opts.body } : {}),
    });
    const text = await response.text();
    if (!response.ok) throw new WeixinApiError(name, `HTTP ${response.status}`, { status: response.status, retryable: retryableStatus(response.status) });
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new WeixinApiError(name, "the server answered with invalid JSON", { retryable: true });
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new WeixinApiError(name, "the server answered with a non-object JSON payload", { retryable: true });
    return parsed as Record<string, unknown>;
  }

  /** A raw CDN request (media bytes), with the HTTP status mapped like the API's. */
  static async cdn(url: string, init: RequestInit & { timeoutMs?: number }): Promise<Response> {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(init.timeoutMs ?? 60_000) });
    if (!response.ok) throw new WeixinApiError("cdn", `HTTP ${response.status}`, { status: response.status, retryable: retryableStatus(response.status) });
    return response;
  }
}
