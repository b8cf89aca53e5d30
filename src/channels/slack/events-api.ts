/**
 * Slack's Events API over HTTP: Slack POSTs each event to `webhookPath` on the gateway's HTTP
 * server. A request is accepted only with a valid `X-Slack-Signature` (v0: HMAC-SHA256 of
 * `v0:<timestamp>:<body>` with the signing secret) and a timestamp within five minutes (a
 * replayed request is refused). `url_verification` is answered with its challenge; an event is
 * acknowledged at once (Slack retries after 3 s) and handed on; a retry of an event already
 * seen (same `event_id`) is acknowledged and dropped. Every gateway worker of a cluster serves
 * the path: `dedup` is then shared through the store, so a retry that reaches another worker
 * is dropped there too.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Logger } from "../../core/logger.js";
import type { ChannelClock } from "../clock.js";
import { MemoryDedup } from "../delivery/inbound-dedup.js";
import type { InboundDedup } from "../delivery/inbound-dedup.js";
import { addWebhookRoute } from "../webhook-routes.js";

/** Slack's replay window. */
export const SIGNATURE_MAX_AGE_S = 5 * 60;
/** Event payloads are small; anything bigger is not from Slack. */
const MAX_BODY_BYTES = 1024 * 1024;

export interface EventsApiOptions {
  server: Server;
  path: string;
  signingSecret: string;
  clock: ChannelClock;
  logger: Logger;
  /** Recognises an `event_id` seen before (keyed `<dedupScope>:<event_id>`). */
  dedup?: InboundDedup;
  dedupScope?: string;
  /** One event callback's `event`; called after the request was acknowledged. */
  onEvent: (event: Record<string, unknown>) => void;
}

/** `v0=<hex>` for a body sent at `timestamp` (seconds): what Slack puts in X-Slack-Signature. */
export function slackSignature(signingSecret: string, timestamp: string, body: string): string {
  return `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

export class EventsApiReceiver {
  private readonly dedup: InboundDedup;
  private release: (() => void) | undefined;

  constructor(private readonly options: EventsApiOptions) {
    this.dedup = options.dedup ?? new MemoryDedup(5_000);
  }

  start(): void {
    this.release ??= addWebhookRoute(this.options.server, this.options.path, (req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        this.options.logger.warn("slack events request failed", { error: String(error) });
        if (!res.headersSent) answer(res, 500, "internal error");
      });
    });
  }

  stop(): void {
    this.release?.();
    this.release = undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST") return answer(res, 405, "Slack events are POSTed");
    const body = await readBody(req);
    if (body === undefined) return answer(res, 413, "request body too large");
    const refusal = this.verify(req, body);
    if (refusal) {
      this.options.logger.warn("slack events request refused", { reason: refusal });
      return answer(res, 401, refusal);
    }
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(body) as Record<string, unknown>;
    } catch {
      return answer(res, 400, "body is not JSON");
    }
    if (payload.type === "url_verification") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ challenge: payload.challenge }));
      return;
    }
    answer(res, 200, "");
    if (payload.type !== "event_callback" || typeof payload.event !== "object" || payload.event === null) return;
    const eventId = typeof payload.event_id === "string" ? payload.event_id : undefined;
    if (eventId && !(await this.dedup.firstSeen(`${this.options.dedupScope ?? "slack"}:${eventId}`))) {
      this.options.logger.debug("slack event delivered again; dropped", { eventId, retry: header(req, "x-slack-retry-num") });
      return;
    }
    this.options.onEvent(payload.event as Record<string, unknown>);
  }

  /** The reason a request is not Slack's, or undefined when its signature holds. */
  private verify(req: IncomingMessage, body: string): string | undefined {
    const timestamp = header(req, "x-slack-request-timestamp");
    const signature = header(req, "x-slack-signature");
    if (!timestamp || !signature) return "missing X-Slack-Request-Timestamp or X-Slack-Signature";
    const sentAt = Number(timestamp);
    const nowS = Math.floor(this.options.clock.now() / 1000);
    if (!Number.isFinite(sentAt) || Math.abs(nowS - sentAt) > SIGNATURE_MAX_AGE_S) return "timestamp outside the five-minute window (replayed request or clock skew)";
    const expected = Buffer.from(slackSignature(this.options.signingSecret, timestamp, body));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return "signature does not match (check channels.slack.signingSecret)";
    return undefined;
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function answer(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
