/** The built-in channel types the gateway can enable (`channels.<name>.type`, else the name). */
import type { Logger } from "../core/logger.js";
import { AccessControl } from "./access/access-control.js";
import { InboundGate } from "./access/inbound-gate.js";
import type { ChannelFactory } from "./channel-manager.js";
import { parseDiscordConfig } from "./discord/config.js";
import { DiscordChannel } from "./discord/discord-channel.js";
import { discordSettingNotes } from "./discord/setting-notes.js";
import { parseEmailConfig } from "./email/config.js";
import type { EmailConfig } from "./email/config.js";
import { EmailChannel } from "./email/email-channel.js";
import { ImapSmtpTransport } from "./email/imap-smtp-transport.js";
import type { MailTransport } from "./email/transport.js";
import { signalFactory } from "./signal/factory.js";
import { parseTelegramConfig } from "./telegram/config.js";
import { TelegramChannel } from "./telegram/telegram-channel.js";
import { parseWhatsAppConfig } from "./whatsapp/config.js";
import { whatsappSettingNotes } from "./whatsapp/setting-notes.js";
import { WhatsAppChannel } from "./whatsapp/whatsapp-channel.js";
import { parseWebSocketConfig } from "./websocket/config.js";
import { WebSocketChannel } from "./websocket/websocket-channel.js";

export const telegramFactory: ChannelFactory = ({ name, raw, deps }) =>
  new TelegramChannel({ ...deps, name, config: parseTelegramConfig(raw, name) });

/**
 * An empty `allowFrom` on the WebSocket channel: with a `token`, every client that presented it
 * is admitted (the token is the credential); without one, the channel pairs like any other —
 * a new client gets a pairing code and nothing reaches the agent until the owner approves it.
 * Reaching a loopback socket proves nothing: any local user or process can.
 */
export const websocketFactory: ChannelFactory = ({ name, raw, shared, deps, httpServer }) => {
  const config = parseWebSocketConfig(raw, name);
  const gate =
    shared.allowFrom.length === 0 && config.token !== undefined
      ? new InboundGate({ bus: deps.bus, access: new AccessControl({ channel: name, allowFrom: ["*"] }), logger: deps.logger })
      : deps.gate;
  return new WebSocketChannel({ ...deps, gate, name, config, server: httpServer });
};

/** WhatsApp Cloud API; phone numbers in allowFrom match with or without "+". */
export const whatsappFactory: ChannelFactory = ({ name, raw, shared, deps, pairing }) => {
  const config = parseWhatsAppConfig(raw, name);
  const allowFrom = shared.allowFrom.map((a) => (a === "*" ? a : a.replace(/^\+/, "").trim()));
  const gate = new InboundGate({ bus: deps.bus, access: new AccessControl({ channel: name, allowFrom, ...(pairing ? { store: pairing } : {}) }), logger: deps.logger });
  for (const note of whatsappSettingNotes(name, raw)) deps.logger.warn(note);
  return new WhatsAppChannel({ ...deps, gate, name, config });
};

export const discordFactory: ChannelFactory = ({ name, raw, deps }) => {
  const channel = new DiscordChannel({ ...deps, name, config: parseDiscordConfig(raw, name) });
  for (const note of discordSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

/** What a mail transport may need beyond its config: where to keep state, how to log. */
export interface MailTransportContext {
  home: string;
  logger: Logger;
  now: () => number;
}

export type MailTransportFactory = (config: EmailConfig, name: string, context: MailTransportContext) => MailTransport;

/** IMAP (imapflow) + SMTP (nodemailer); a config without hosts/credentials fails the start. */
export const imapSmtpTransportFactory: MailTransportFactory = (config, name, context) =>
  new ImapSmtpTransport({ config, name, home: context.home, logger: context.logger, now: context.now });

/**
 * Email answers only listed addresses (compared case-insensitively). An empty list admits
 * nobody: a pairing code mailed to an unknown sender would be backscatter.
 */
export function emailFactory(createTransport: MailTransportFactory = imapSmtpTransportFactory): ChannelFactory {
  return ({ name, raw, shared, deps }) => {
    const config = parseEmailConfig(raw, name);
    const allowFrom = shared.allowFrom.map((a) => (a === "*" ? a : a.trim().toLowerCase()));
    const gate = new InboundGate({ bus: deps.bus, access: new AccessControl({ channel: name, allowFrom }), logger: deps.logger });
    return new EmailChannel({ ...deps, gate, name, config, transport: createTransport(config, name, { home: deps.home, logger: deps.logger, now: () => deps.clock.now() }) });
  };
}

export function defaultChannelFactories(options: { mailTransport?: MailTransportFactory } = {}): Record<string, ChannelFactory> {
  return { telegram: telegramFactory, websocket: websocketFactory, email: emailFactory(options.mailTransport), discord: discordFactory, signal: signalFactory, whatsapp: whatsappFactory };
}
