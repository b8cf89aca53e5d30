/** The built-in channel types the gateway can enable (`channels.<name>.type`, else the name). */
import type { Logger } from "../core/logger.js";
import { AccessControl } from "./access/access-control.js";
import { InboundGate } from "./access/inbound-gate.js";
import type { ChannelFactory } from "./channel-manager.js";
import { parseDingTalkConfig } from "./dingtalk/config.js";
import { DingTalkChannel } from "./dingtalk/dingtalk-channel.js";
import { dingtalkSettingNotes } from "./dingtalk/setting-notes.js";
import { parseDiscordConfig } from "./discord/config.js";
import { DiscordChannel } from "./discord/discord-channel.js";
import { discordSettingNotes } from "./discord/setting-notes.js";
import { parseEmailConfig } from "./email/config.js";
import type { EmailConfig } from "./email/config.js";
import { EmailChannel } from "./email/email-channel.js";
import { ImapSmtpTransport } from "./email/imap-smtp-transport.js";
import type { MailTransport } from "./email/transport.js";
import { parseSlackConfig } from "./slack/config.js";
import { SlackChannel } from "./slack/slack-channel.js";
import { slackSettingNotes } from "./slack/setting-notes.js";
import { parseFeishuConfig } from "./feishu/config.js";
import { FeishuChannel } from "./feishu/feishu-channel.js";
import { feishuSettingNotes } from "./feishu/setting-notes.js";
import { parseMSTeamsConfig } from "./msteams/config.js";
import { MSTeamsChannel } from "./msteams/msteams-channel.js";
import { msteamsSettingNotes } from "./msteams/setting-notes.js";
import { mattermostGates } from "./mattermost/access.js";
import { parseMattermostConfig } from "./mattermost/config.js";
import { MattermostChannel } from "./mattermost/mattermost-channel.js";
import { mattermostSettingNotes } from "./mattermost/setting-notes.js";
import { parseNapcatConfig } from "./napcat/config.js";
import { NapcatChannel } from "./napcat/napcat-channel.js";
import { napcatSettingNotes } from "./napcat/setting-notes.js";
import { parseQQConfig } from "./qq/config.js";
import { QQChannel } from "./qq/qq-channel.js";
import { qqSettingNotes } from "./qq/setting-notes.js";
import { parseMatrixConfig } from "./matrix/config.js";
import { MatrixChannel } from "./matrix/matrix-channel.js";
import { matrixSettingNotes } from "./matrix/setting-notes.js";
import { signalFactory } from "./signal/factory.js";
import { parseTelegramConfig } from "./telegram/config.js";
import { TelegramChannel } from "./telegram/telegram-channel.js";
import { parseWhatsAppConfig } from "./whatsapp/config.js";
import { whatsappSettingNotes } from "./whatsapp/setting-notes.js";
import { WhatsAppChannel } from "./whatsapp/whatsapp-channel.js";
import { parseWebSocketConfig } from "./websocket/config.js";
import { WebSocketChannel } from "./websocket/websocket-channel.js";
import { parseWecomConfig } from "./wecom/config.js";
import { wecomSettingNotes } from "./wecom/setting-notes.js";
import { WecomChannel } from "./wecom/wecom-channel.js";
import { parseWeixinConfig } from "./weixin/config.js";
import { weixinSettingNotes } from "./weixin/setting-notes.js";
import { WeixinChannel } from "./weixin/weixin-channel.js";

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

export const dingtalkFactory: ChannelFactory = ({ name, raw, deps }) => {
  const channel = new DingTalkChannel({ ...deps, name, config: parseDingTalkConfig(raw, name) });
  for (const note of dingtalkSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

export const wecomFactory: ChannelFactory = ({ name, raw, deps }) => {
  const channel = new WecomChannel({ ...deps, name, config: parseWecomConfig(raw, name) });
  for (const note of wecomSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

/**
 * Slack: `dm.policy: "allowlist"` admits `dm.allowFrom` in direct messages beside `allowFrom`
 * and paired senders (the Python nanobot's list of direct-message senders).
 */
export const slackFactory: ChannelFactory = ({ name, raw, deps, httpServer }) => {
  const config = parseSlackConfig(raw, name);
  const dmAllowed = config.dm.policy === "allowlist" ? config.dm.allowFrom : [];
  const dmGate = dmAllowed.length ? new InboundGate({ bus: deps.bus, access: new AccessControl({ channel: name, allowFrom: dmAllowed }), logger: deps.logger }) : undefined;
  const channel = new SlackChannel({ ...deps, name, config, ...(dmGate ? { dmGate } : {}), ...(httpServer ? { server: httpServer } : {}) });
  for (const note of slackSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

export const feishuFactory: ChannelFactory = ({ name, raw, deps }) => {
  const channel = new FeishuChannel({ ...deps, name, config: parseFeishuConfig(raw, name) });
  for (const note of feishuSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

/** Teams posts to the channel's own listener (`host`/`port`/`path`), not the gateway's server. */
export const msteamsFactory: ChannelFactory = ({ name, raw, deps }) => {
  const channel = new MSTeamsChannel({ ...deps, name, config: parseMSTeamsConfig(raw, name) });
  for (const note of msteamsSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

/** Mattermost builds its own gates: direct messages follow `dm.policy` / `dm.allowFrom`. */
export const mattermostFactory: ChannelFactory = ({ name, raw, deps, pairing }) => {
  const config = parseMattermostConfig(raw, name);
  const gates = mattermostGates(name, config, deps.bus, deps.logger, pairing);
  const channel = new MattermostChannel({ ...deps, gate: gates.group, dmGate: gates.dm, name, config });
  for (const note of mattermostSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

export const qqFactory: ChannelFactory = ({ name, raw, deps }) => {
  const channel = new QQChannel({ ...deps, name, config: parseQQConfig(raw, name) });
  for (const note of qqSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

/** QQ personal accounts through NapCat (OneBot v11 over NapCat's WebSocket server). */
export const napcatFactory: ChannelFactory = ({ name, raw, deps }) => {
  const channel = new NapcatChannel({ ...deps, name, config: parseNapcatConfig(raw, name) });
  for (const note of napcatSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

export const matrixFactory: ChannelFactory = ({ name, raw, deps }) => {
  const channel = new MatrixChannel({ ...deps, name, config: parseMatrixConfig(raw, name) });
  for (const note of matrixSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

/** Personal WeChat (iLink bot API); account.json lives under `<home>/weixin` unless `stateDir` says otherwise. */
export const weixinFactory: ChannelFactory = ({ name, raw, deps }) => {
  const channel = new WeixinChannel({ ...deps, name, config: parseWeixinConfig(raw, name, deps.home) });
  for (const note of weixinSettingNotes(name, raw)) deps.logger.warn(note);
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
  return {
    telegram: telegramFactory,
    websocket: websocketFactory,
    email: emailFactory(options.mailTransport),
    discord: discordFactory,
    dingtalk: dingtalkFactory,
    wecom: wecomFactory,
    slack: slackFactory,
    feishu: feishuFactory,
    msteams: msteamsFactory,
    mattermost: mattermostFactory,
    qq: qqFactory,
    matrix: matrixFactory,
    signal: signalFactory,
    whatsapp: whatsappFactory,
    napcat: napcatFactory,
    weixin: weixinFactory,
  };
}
