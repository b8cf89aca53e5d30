/**
 * The built-in channel types the gateway can enable (`channels.<name>.type`, else the name).
 *
 * Each factory loads its channel's modules when the channel starts: a channel's client library
 * (grammy, ws, marked, …) and its config schema cost memory and start-up time in every gateway
 * that does not run it. (The setting notes are small and already loaded by the config check.)
 */
import type { Logger } from "../core/logger.js";
import { AccessControl } from "./access/access-control.js";
import { InboundGate } from "./access/inbound-gate.js";
import type { ChannelFactory } from "./channel-manager.js";
import type { EmailConfig } from "./email/config.js";
import type { MailTransport } from "./email/transport.js";
import { dingtalkSettingNotes } from "./dingtalk/setting-notes.js";
import { discordSettingNotes } from "./discord/setting-notes.js";
import { feishuSettingNotes } from "./feishu/setting-notes.js";
import { matrixSettingNotes } from "./matrix/setting-notes.js";
import { mattermostSettingNotes } from "./mattermost/setting-notes.js";
import { msteamsSettingNotes } from "./msteams/setting-notes.js";
import { napcatSettingNotes } from "./napcat/setting-notes.js";
import { qqSettingNotes } from "./qq/setting-notes.js";
import { slackSettingNotes } from "./slack/setting-notes.js";
import { wecomSettingNotes } from "./wecom/setting-notes.js";
import { weixinSettingNotes } from "./weixin/setting-notes.js";
import { whatsappSettingNotes } from "./whatsapp/setting-notes.js";

export const telegramFactory: ChannelFactory = async ({ name, raw, deps }) => {
  const [{ TelegramChannel }, { parseTelegramConfig }] = await Promise.all([import("./telegram/telegram-channel.js"), import("./telegram/config.js")]);
  return new TelegramChannel({ ...deps, name, config: parseTelegramConfig(raw, name) });
};

/**
 * An empty `allowFrom` on the WebSocket channel: with a `token`, every client that presented it
 * is admitted (the token is the credential); without one, the channel pairs like any other —
 * a new client gets a pairing code and nothing reaches the agent until the owner approves it.
 * Reaching a loopback socket proves nothing: any local user or process can.
 */
export const websocketFactory: ChannelFactory = async ({ name, raw, shared, deps, httpServer }) => {
  const [{ WebSocketChannel }, { parseWebSocketConfig }] = await Promise.all([import("./websocket/websocket-channel.js"), import("./websocket/config.js")]);
  const config = parseWebSocketConfig(raw, name);
  const gate =
    shared.allowFrom.length === 0 && config.token !== undefined
      ? new InboundGate({ bus: deps.bus, access: new AccessControl({ channel: name, allowFrom: ["*"] }), logger: deps.logger })
      : deps.gate;
  return new WebSocketChannel({ ...deps, gate, name, config, server: httpServer });
};

/** WhatsApp Cloud API; phone numbers in allowFrom match with or without "+". */
export const whatsappFactory: ChannelFactory = async ({ name, raw, shared, deps, pairing }) => {
  const [{ WhatsAppChannel }, { parseWhatsAppConfig }] = await Promise.all([import("./whatsapp/whatsapp-channel.js"), import("./whatsapp/config.js")]);
  const config = parseWhatsAppConfig(raw, name);
  const allowFrom = shared.allowFrom.map((a) => (a === "*" ? a : a.replace(/^\+/, "").trim()));
  const gate = new InboundGate({ bus: deps.bus, access: new AccessControl({ channel: name, allowFrom, ...(pairing ? { store: pairing } : {}) }), logger: deps.logger });
  for (const note of whatsappSettingNotes(name, raw)) deps.logger.warn(note);
  return new WhatsAppChannel({ ...deps, gate, name, config });
};

export const discordFactory: ChannelFactory = async ({ name, raw, deps }) => {
  const [{ DiscordChannel }, { parseDiscordConfig }] = await Promise.all([import("./discord/discord-channel.js"), import("./discord/config.js")]);
  const channel = new DiscordChannel({ ...deps, name, config: parseDiscordConfig(raw, name) });
  for (const note of discordSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

export const dingtalkFactory: ChannelFactory = async ({ name, raw, deps }) => {
  const [{ DingTalkChannel }, { parseDingTalkConfig }] = await Promise.all([import("./dingtalk/dingtalk-channel.js"), import("./dingtalk/config.js")]);
  const channel = new DingTalkChannel({ ...deps, name, config: parseDingTalkConfig(raw, name) });
  for (const note of dingtalkSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

export const wecomFactory: ChannelFactory = async ({ name, raw, deps }) => {
  const [{ WecomChannel }, { parseWecomConfig }] = await Promise.all([import("./wecom/wecom-channel.js"), import("./wecom/config.js")]);
  const channel = new WecomChannel({ ...deps, name, config: parseWecomConfig(raw, name) });
  for (const note of wecomSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

/**
 * Slack: `dm.policy: "allowlist"` admits `dm.allowFrom` in direct messages beside `allowFrom`
 * and paired senders (the Python nanobot's list of direct-message senders).
 */
export const slackFactory: ChannelFactory = async ({ name, raw, deps, httpServer }) => {
  const [{ SlackChannel }, { parseSlackConfig }] = await Promise.all([import("./slack/slack-channel.js"), import("./slack/config.js")]);
  const config = parseSlackConfig(raw, name);
  const dmAllowed = config.dm.policy === "allowlist" ? config.dm.allowFrom : [];
  const dmGate = dmAllowed.length ? new InboundGate({ bus: deps.bus, access: new AccessControl({ channel: name, allowFrom: dmAllowed }), logger: deps.logger }) : undefined;
  const channel = new SlackChannel({ ...deps, name, config, ...(dmGate ? { dmGate } : {}), ...(httpServer ? { server: httpServer } : {}) });
  for (const note of slackSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

export const feishuFactory: ChannelFactory = async ({ name, raw, deps }) => {
  const [{ FeishuChannel }, { parseFeishuConfig }] = await Promise.all([import("./feishu/feishu-channel.js"), import("./feishu/config.js")]);
  const channel = new FeishuChannel({ ...deps, name, config: parseFeishuConfig(raw, name) });
  for (const note of feishuSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

/** Teams posts to the channel's own listener (`host`/`port`/`path`), not the gateway's server. */
export const msteamsFactory: ChannelFactory = async ({ name, raw, deps }) => {
  const [{ MSTeamsChannel }, { parseMSTeamsConfig }] = await Promise.all([import("./msteams/msteams-channel.js"), import("./msteams/config.js")]);
  const channel = new MSTeamsChannel({ ...deps, name, config: parseMSTeamsConfig(raw, name) });
  for (const note of msteamsSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

/** Mattermost builds its own gates: direct messages follow `dm.policy` / `dm.allowFrom`. */
export const mattermostFactory: ChannelFactory = async ({ name, raw, deps, pairing }) => {
  const [{ MattermostChannel }, { parseMattermostConfig }, { mattermostGates }] = await Promise.all([
    import("./mattermost/mattermost-channel.js"),
    import("./mattermost/config.js"),
    import("./mattermost/access.js"),
  ]);
  const config = parseMattermostConfig(raw, name);
  const gates = mattermostGates(name, config, deps.bus, deps.logger, pairing);
  const channel = new MattermostChannel({ ...deps, gate: gates.group, dmGate: gates.dm, name, config });
  for (const note of mattermostSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

export const qqFactory: ChannelFactory = async ({ name, raw, deps }) => {
  const [{ QQChannel }, { parseQQConfig }] = await Promise.all([import("./qq/qq-channel.js"), import("./qq/config.js")]);
  const channel = new QQChannel({ ...deps, name, config: parseQQConfig(raw, name) });
  for (const note of qqSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

/** QQ personal accounts through NapCat (OneBot v11 over NapCat's WebSocket server). */
export const napcatFactory: ChannelFactory = async ({ name, raw, deps }) => {
  const [{ NapcatChannel }, { parseNapcatConfig }] = await Promise.all([import("./napcat/napcat-channel.js"), import("./napcat/config.js")]);
  const channel = new NapcatChannel({ ...deps, name, config: parseNapcatConfig(raw, name) });
  for (const note of napcatSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

export const matrixFactory: ChannelFactory = async ({ name, raw, deps }) => {
  const [{ MatrixChannel }, { parseMatrixConfig }] = await Promise.all([import("./matrix/matrix-channel.js"), import("./matrix/config.js")]);
  const channel = new MatrixChannel({ ...deps, name, config: parseMatrixConfig(raw, name) });
  for (const note of matrixSettingNotes(name, raw)) deps.logger.warn(note);
  return channel;
};

/** Personal WeChat (iLink bot API); account.json lives under `<home>/weixin` unless `stateDir` says otherwise. */
export const weixinFactory: ChannelFactory = async ({ name, raw, deps }) => {
  const [{ WeixinChannel }, { parseWeixinConfig }] = await Promise.all([import("./weixin/weixin-channel.js"), import("./weixin/config.js")]);
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

export type MailTransportFactory = (config: EmailConfig, name: string, context: MailTransportContext) => MailTransport | Promise<MailTransport>;

/** IMAP (imapflow) + SMTP (nodemailer); a config without hosts/credentials fails the start. */
export const imapSmtpTransportFactory: MailTransportFactory = async (config, name, context) => {
  const { ImapSmtpTransport } = await import("./email/imap-smtp-transport.js");
  return new ImapSmtpTransport({ config, name, home: context.home, logger: context.logger, now: context.now });
};

/**
 * Email answers only listed addresses (compared case-insensitively). An empty list admits
 * nobody: a pairing code mailed to an unknown sender would be backscatter.
 */
export function emailFactory(createTransport: MailTransportFactory = imapSmtpTransportFactory): ChannelFactory {
  return async ({ name, raw, shared, deps }) => {
    const [{ EmailChannel }, { parseEmailConfig }] = await Promise.all([import("./email/email-channel.js"), import("./email/config.js")]);
    const config = parseEmailConfig(raw, name);
    const allowFrom = shared.allowFrom.map((a) => (a === "*" ? a : a.trim().toLowerCase()));
    const gate = new InboundGate({ bus: deps.bus, access: new AccessControl({ channel: name, allowFrom }), logger: deps.logger });
    const transport = await createTransport(config, name, { home: deps.home, logger: deps.logger, now: () => deps.clock.now() });
    return new EmailChannel({ ...deps, gate, name, config, transport });
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
    signal: async (input) => (await import("./signal/factory.js")).signalFactory(input),
    whatsapp: whatsappFactory,
    napcat: napcatFactory,
    weixin: weixinFactory,
  };
}
