/**
 * The stream-mode connection, through the official `dingtalk-stream` SDK: it opens the
 * WebSocket, answers the server's pings, emits CALLBACK frames by topic and reconnects after a
 * drop. The SDK hard-codes the URL it asks for a connection ticket
 * (`POST /v1.0/gateway/connections/open`), so nanobot asks for the ticket itself — the same
 * request at `apiRoot` — and leaves everything after that to the SDK.
 */
import type { DWClient, DWClientDownStream } from "dingtalk-stream";
import { DingTalkApiError } from "./openapi.js";

export type { DWClientDownStream };

/** The topic robot messages arrive on. */
export const ROBOT_TOPIC = "/v1.0/im/bot/messages/get";

export interface StreamClientOptions {
  clientId: string;
  clientSecret: string;
  apiRoot: string;
  onFrame: (frame: DWClientDownStream) => void;
  /** A ticket request failed (the SDK retries it; the channel records the reason). */
  onTicketError: (error: unknown) => void;
  /** A ticket was issued: a (re)connection is starting. */
  onTicket: () => void;
}

/** The SDK's client with the ticket asked at `apiRoot`; loaded when the channel starts. */
export async function createStreamClient(options: StreamClientOptions): Promise<DWClient> {
  const { DWClient } = await import("dingtalk-stream");

  class NanobotStreamClient extends DWClient {
    override async getEndpoint(): Promise<this> {
      try {
        const response = await fetch(`${options.apiRoot}/v1.0/gateway/connections/open`, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json" },
          body: JSON.stringify({ clientId: options.clientId, clientSecret: options.clientSecret, ua: this.config.ua ?? "", subscriptions: this.config.subscriptions }),
        });
        const text = await response.text();
        let body: { endpoint?: unknown; ticket?: unknown; code?: unknown; message?: unknown } = {};
        try {
          body = JSON.parse(text) as typeof body;
        } catch {
          // Not JSON: reported with the status below.
        }
        if (!response.ok) throw new DingTalkApiError("stream ticket request", response.status, String(body.code ?? ""), String(body.message ?? text.slice(0, 200)));
        if (typeof body.endpoint !== "string" || typeof body.ticket !== "string") {
          throw new DingTalkApiError("stream ticket request", response.status, "", "the answer has no endpoint or ticket");
        }
        // The SDK connects to `dw_url`; it is private in its typings only.
        (this as unknown as { dw_url: string }).dw_url = `${body.endpoint}?ticket=${encodeURIComponent(body.ticket)}`;
        options.onTicket();
        return this;
      } catch (error) {
        options.onTicketError(error);
        throw error;
      }
    }
  }

  const client = new NanobotStreamClient({ clientId: options.clientId, clientSecret: options.clientSecret, ua: "nanobot" });
  client.registerCallbackListener(ROBOT_TOPIC, options.onFrame);
  return client;
}
