/** `channels.websocket`: where the socket listens and the token clients must present. */
import { z } from "zod";
import { allowedHost, allowedOrigin } from "../../config/schema-misc.js";
import { bool, idString, port, str } from "../../config/schema-primitives.js";
import { parseChannelConfig } from "../channel-config.js";

export const websocketConfigSchema = z.looseObject({
  enabled: bool().default(false),
  allowFrom: z.array(idString(), { error: "expected a list of ids" }).default([]),
  streaming: bool().default(true),
  /** Upgrade path on the shared (or own) HTTP server; matched exactly. */
  path: str().regex(/^\/[^\s?#]*$/, { error: 'expected a path starting with "/" (no query or spaces)' }).default("/ws"),
  /** Own listener (used when no gateway server is shared). */
  host: str().default("127.0.0.1"),
  port: port().default(18791),
  /** Clients send it as `?token=` or `Authorization: Bearer`; required on wildcard hosts. */
  token: str().min(1, { error: "expected a non-empty token" }).optional(),
  /**
   * Own listener only (on the gateway's server the gateway's lists apply): host names besides
   * loopback and the bound address, and origins besides the listener's own, allowed to connect.
   */
  allowedHosts: z.array(allowedHost(), { error: "expected a list of host names" }).default([]),
  allowedOrigins: z.array(allowedOrigin(), { error: "expected a list of origins" }).default([]),
  /** Largest inbound frame, bytes. */
  maxPayload: z.number().int().positive().default(1024 * 1024),
});

export type WebSocketConfig = z.output<typeof websocketConfigSchema>;

export function parseWebSocketConfig(raw: unknown, name = "websocket"): WebSocketConfig {
  return parseChannelConfig(name, websocketConfigSchema, raw);
}
