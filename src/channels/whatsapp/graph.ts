/**
 * The WhatsApp Cloud API over Meta's Graph API with `fetch` (Meta has no maintained Node SDK
 * for it): messages and typing at `/{phone-number-id}/messages`, uploads at
 * `/{phone-number-id}/media`, downloads through `/{media-id}`'s short-lived URL. Failures keep
 * the HTTP status and Graph error code for the delivery queue.
 */
import type { RetryDecision } from "../delivery/delivery-queue.js";

export class GraphError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: number,
  ) {
    super(message);
    this.name = "GraphError";
  }
}

/** Graph/Cloud API codes for throttling: wait and try again. */
const THROTTLED: ReadonlySet<number> = new Set([4, 80007, 130429, 131048, 131056]);

export function classifyGraphError(error: unknown): RetryDecision {
  if (error instanceof GraphError) {
    if (error.code !== undefined && THROTTLED.has(error.code)) return { retryable: true };
    return { retryable: error.status >= 500 || error.status === 429 };
  }
  return { retryable: true };
}

export interface GraphOptions {
  apiRoot: string;
  apiVersion: string;
  accessToken: string;
  phoneNumberId: string;
}

export class GraphClient {
  private readonly base: string;

  constructor(private readonly options: GraphOptions) {
    this.base = `${options.apiRoot.replace(/\/+$/, "")}/${options.apiVersion}`;
  }

  private async request<T>(method: string, url: string, body?: string | FormData, json = true): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.accessToken}` };
    if (json && body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), signal: AbortSignal.timeout(60_000) });
    const text = await response.text();
    if (!response.ok) {
      let message = text.slice(0, 200);
      let code: number | undefined;
      try {
        const error = (JSON.parse(text) as { error?: { message?: unknown; code?: unknown } }).error;
        if (typeof error?.message === "string") message = error.message;
        if (typeof error?.code === "number") code = error.code;
      } catch {
        // not JSON: keep the text
      }
      throw new GraphError(`WhatsApp Cloud API ${method} ${new URL(url).pathname}: HTTP ${response.status} ${message}${code !== undefined ? ` (code ${code})` : ""}`, response.status, code);
    }
    return (text ? JSON.parse(text) : {}) as T;
  }

  /** Sends one message object; resolves to its `wamid`. */
  async sendMessage(to: string, group: boolean, message: Record<string, unknown>, replyTo?: string): Promise<string> {
    const body = { messaging_product: "whatsapp", recipient_type: group ? "group" : "individual", to, ...message, ...(replyTo ? { context: { message_id: replyTo } } : {}) };
    const sent = await this.request<{ messages?: Array<{ id?: string }> }>("POST", `${this.base}/${this.options.phoneNumberId}/messages`, JSON.stringify(body));
    return sent.messages?.[0]?.id ?? "";
  }

  /** Marks the user's message read and shows "typing…" for up to 25 s (or until the reply). */
  async typing(messageId: string): Promise<void> {
    const body = { messaging_product: "whatsapp", status: "read", message_id: messageId, typing_indicator: { type: "text" } };
    await this.request("POST", `${this.base}/${this.options.phoneNumberId}/messages`, JSON.stringify(body));
  }

  async upload(data: Buffer, mimeType: string, name: string): Promise<string> {
    const form = new FormData();
    form.append("messaging_product", "whatsapp");
    form.append("type", mimeType);
    form.append("file", new Blob([data], { type: mimeType }), name);
    const uploaded = await this.request<{ id?: string }>("POST", `${this.base}/${this.options.phoneNumberId}/media`, form, false);
    if (!uploaded.id) throw new GraphError("WhatsApp Cloud API media upload gave no id", 502);
    return uploaded.id;
  }

  async download(mediaId: string): Promise<{ data: Buffer; mimeType?: string }> {
    const info = await this.request<{ url?: string; mime_type?: string }>("GET", `${this.base}/${encodeURIComponent(mediaId)}`);
    if (!info.url) throw new GraphError(`WhatsApp Cloud API media ${mediaId} has no url`, 404);
    const response = await fetch(info.url, { headers: { authorization: `Bearer ${this.options.accessToken}` }, signal: AbortSignal.timeout(120_000) });
    if (!response.ok) throw new GraphError(`WhatsApp media download: HTTP ${response.status}`, response.status);
    return { data: Buffer.from(await response.arrayBuffer()), ...(info.mime_type ? { mimeType: info.mime_type } : {}) };
  }
}
