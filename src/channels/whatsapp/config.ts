/**
 * `channels.whatsapp`: nanobot speaks the WhatsApp Cloud API (Meta's Graph API + webhooks). The
 * Python nanobot's keys `allowFrom` and `groupPolicy` (default "open", as there) are honoured;
 * its WhatsApp Web session keys (`databasePath`, `lidMappings`) and the old bridge keys
 * (`bridgeUrl`, `bridgeToken`) are read and warned about (see `setting-notes.ts`).
 */
import { z } from "zod";
import { bool, idString, nonNegativeInt, oneOf, str } from "../../config/schema-primitives.js";
import { ConfigError } from "../../core/errors.js";
import { parseChannelConfig } from "../channel-config.js";

export const whatsappConfigSchema = z.looseObject({
  enabled: bool().default(false),
  allowFrom: z.array(idString(), { error: "expected a list of phone numbers" }).default([]),
  /** "open": every group message; "mention": only when the business number is @mentioned or replied to. */
  groupPolicy: oneOf(["open", "mention"]).default("open"),
  /** A system-user access token with whatsapp_business_messaging. */
  accessToken: str().optional(),
  /** The business phone number's id (WhatsApp Manager → API setup), not the number itself. */
  phoneNumberId: idString().optional(),
  /** The app secret: every webhook POST must carry its X-Hub-Signature-256. */
  appSecret: str().optional(),
  /** The token typed into the webhook settings; Meta's verification GET must present it. */
  verifyToken: str().optional(),
  /** Graph API base, for self-hosted or test servers. */
  apiRoot: str().default("https://graph.facebook.com"),
  apiVersion: str().default("v21.0"),
  /** Where the webhook listens (behind your HTTPS reverse proxy or tunnel). */
  webhookHost: str().default("127.0.0.1"),
  /** 0 picks a free port (tests). */
  webhookPort: nonNegativeInt().max(65_535, "expected a port number (0-65535)").default(18_792),
  webhookPath: str().default("/whatsapp/webhook"),
  /** The Cloud API cannot edit messages, so a streamed reply is sent once, at its end. */
  streaming: bool().default(true),
  sendProgress: bool().default(false),
  databasePath: str().optional(),
  lidMappings: z.record(z.string(), z.unknown()).optional(),
  bridgeUrl: str().optional(),
  bridgeToken: str().optional(),
});

type Parsed = z.output<typeof whatsappConfigSchema>;
export type WhatsAppConfig = Parsed & { accessToken: string; phoneNumberId: string; appSecret: string; verifyToken: string };

const REQUIRED: Array<[keyof WhatsAppConfig, string]> = [
  ["accessToken", "a Cloud API access token (Meta Business settings → System users → Generate token, with whatsapp_business_messaging)"],
  ["phoneNumberId", "the business phone number's id (WhatsApp Manager → API setup → Phone number ID)"],
  ["appSecret", "the Meta app's secret (App settings → Basic), to check each webhook's X-Hub-Signature-256"],
  ["verifyToken", "the verify token you enter in the app's webhook settings"],
];

export function parseWhatsAppConfig(raw: unknown, name = "whatsapp"): WhatsAppConfig {
  const parsed = parseChannelConfig(name, whatsappConfigSchema, raw);
  for (const [key, what] of REQUIRED) {
    const value = parsed[key as keyof Parsed];
    if (typeof value !== "string" || !value.trim()) {
      const path = `channels.${name}.${key}`;
      const python = parsed.databasePath !== undefined || parsed.bridgeUrl !== undefined ? " (nanobot speaks the WhatsApp Cloud API; a Python WhatsApp Web session or bridge cannot be used)" : "";
      throw new ConfigError(`${path}: expected ${what}${python}`, { path, expected: what });
    }
  }
  if (!parsed.webhookPath.startsWith("/")) {
    const path = `channels.${name}.webhookPath`;
    throw new ConfigError(`${path}: expected a path starting with "/"`, { path, expected: "a path starting with /" });
  }
  return parsed as WhatsAppConfig;
}
