export { AccessControl } from "./access/access-control.js";
export type { AccessControlOptions, AccessDecision, AccessRequest } from "./access/access-control.js";
export { InboundGate, pairingReply } from "./access/inbound-gate.js";
export type { GateInput, GateOutcome, InboundGateOptions } from "./access/inbound-gate.js";
export { handlePairingCommand, PAIRING_USAGE, runPairingCommand } from "./access/pairing-command.js";
export type { PairingCommandResult } from "./access/pairing-command.js";
export {
  PAIRING_ALPHABET,
  PAIRING_CODE_LENGTH,
  PAIRING_TTL_MS,
  PairingStore,
  pairingStorePath,
} from "./access/pairing-store.js";
export type { ApprovedSender, PairingRequest, PairingStoreOptions, PendingPairing } from "./access/pairing-store.js";
export { parseChannelConfig } from "./channel-config.js";
export type { SharedChannelSettings } from "./channel-config.js";
export { ChannelManager } from "./channel-manager.js";
export type { ChannelFactory, ChannelFactoryInput, ChannelManagerOptions, ChannelStartResult } from "./channel-manager.js";
export { systemClock } from "./clock.js";
export type { ChannelClock } from "./clock.js";
export { DEFAULT_RETRY_DELAYS_MS, DeliveryError, DeliveryQueue } from "./delivery/delivery-queue.js";
export type { DeliveryOutcome, DeliveryQueueOptions, ErrorClassifier, RetryDecision, Sleep } from "./delivery/delivery-queue.js";
export { splitMessage, splitRendered } from "./delivery/split-message.js";
export { StreamEditor } from "./delivery/stream-editor.js";
export type { StreamEditorOptions, StreamSurface } from "./delivery/stream-editor.js";
export { defaultChannelFactories, emailFactory, imapSmtpTransportFactory, telegramFactory, websocketFactory } from "./factories.js";
export type { MailTransportContext } from "./factories.js";
export type { MailTransportFactory } from "./factories.js";
export { parseEmailConfig } from "./email/config.js";
export type { EmailConfig } from "./email/config.js";
export { EmailChannel, replySubject, stripQuotedReply } from "./email/email-channel.js";
export type { EmailChannelOptions } from "./email/email-channel.js";
export { ImapSmtpTransport } from "./email/imap-smtp-transport.js";
export type { ImapSmtpTransportOptions } from "./email/imap-smtp-transport.js";
export { isRetryableMailError } from "./email/transport.js";
export type { IncomingMail, MailAddress, MailTransport, OutgoingMail } from "./email/transport.js";
export { registerPairingCommand } from "./pairing-cli.js";
export { parseTelegramConfig } from "./telegram/config.js";
export type { TelegramConfig } from "./telegram/config.js";
export { markdownToTelegramHtml } from "./telegram/markdown-html.js";
export { TelegramChannel } from "./telegram/telegram-channel.js";
export type { TelegramChannelOptions } from "./telegram/telegram-channel.js";
export { parseWebSocketConfig } from "./websocket/config.js";
export type { WebSocketConfig } from "./websocket/config.js";
export { WebSocketChannel } from "./websocket/websocket-channel.js";
export type { WebSocketChannelOptions } from "./websocket/websocket-channel.js";
export { INTERNAL_CHANNELS, isInternalChannel } from "./types.js";
export type { Channel, ChannelDeps, SenderIdentity } from "./types.js";
