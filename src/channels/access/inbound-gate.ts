/**
 * The single door from a platform into the bus. Adapters hand it what the platform said; the
 * gate stamps the channel's own name on the message (so no platform message can claim an
 * internal channel), drops metadata that would pick the agent or the session (see
 * `inbound-metadata.ts`), drops redelivered updates, applies access control and publishes.
 */
import type { InboundMessage, MediaItem, MessageBus } from "../../bus/types.js";
import { silentLogger } from "../../core/logger.js";
import type { Logger } from "../../core/logger.js";
import { LruSet } from "../delivery/lru-set.js";
import type { SenderIdentity } from "../types.js";
import type { AccessControl } from "./access-control.js";
import { ownSessionKey, platformMetadata } from "./inbound-metadata.js";

export interface GateInput {
  /** Unique per platform message; repeated ids are dropped. */
  id: string;
  chatId: string;
  sender: SenderIdentity;
  content: string;
  isDirect: boolean;
  media?: MediaItem[];
  /** Platform facts; routing keys (`agent`, `sessionKey`, …) are dropped (see inbound-metadata.ts). */
  metadata?: Record<string, unknown>;
  /** A session of the channel's own (`<channel>:…`, e.g. a forum topic); any other key is ignored. */
  sessionKey?: string;
  /**
   * Called once the sender is admitted, right before the message is published (its answer may
   * follow at once): where a channel keeps what only admitted senders may leave behind (a reply
   * token). Never called for a stranger, a dropped or a duplicate message.
   */
  onAdmitted?: () => void;
}

export type GateOutcome = "forwarded" | "pairing" | "dropped" | "duplicate";

export interface InboundGateOptions {
  bus: MessageBus;
  access: AccessControl;
  logger?: Logger;
  now?: () => number;
}

export class InboundGate {
  readonly channel: string;
  private readonly bus: MessageBus;
  private readonly access: AccessControl;
  private readonly logger: Logger;
  private readonly now: () => number;
  private readonly seen = new LruSet(5_000);

  constructor(options: InboundGateOptions) {
    this.bus = options.bus;
    this.access = options.access;
    this.channel = options.access.channel;
    this.logger = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
  }

  /**
   * Checks and forwards one platform message. `replyPlain` sends text straight back to the
   * sender's chat; it is used only for the pairing code.
   */
  async receive(input: GateInput, replyPlain: (text: string) => Promise<void>): Promise<GateOutcome> {
    if (this.seen.has(input.id)) return "duplicate";
    this.seen.add(input.id);
    const decision = await this.access.check({ sender: input.sender, isDirect: input.isDirect, chatId: input.chatId });
    if (decision.kind === "deny") {
      this.logger.info("inbound message dropped", {
        channel: this.channel,
        senderId: input.sender.id,
        chatId: input.chatId,
        reason: decision.reason,
      });
      return "dropped";
    }
    if (decision.kind === "pair") {
      this.logger.info("pairing code issued", { channel: this.channel, senderId: input.sender.id, isNew: decision.isNew });
      await replyPlain(pairingReply(decision.code));
      return "pairing";
    }
    const message: InboundMessage = {
      id: input.id,
      channel: this.channel,
      chatId: input.chatId,
      senderId: input.sender.id,
      content: input.content,
      receivedAt: this.now(),
    };
    if (input.media?.length) message.media = input.media;
    const sessionKey = ownSessionKey(this.channel, input.sessionKey);
    if (sessionKey) message.sessionKey = sessionKey;
    const { metadata, dropped } = platformMetadata(input.metadata);
    const refusedKey = input.sessionKey && sessionKey !== input.sessionKey ? input.sessionKey : undefined;
    if (dropped.length > 0 || refusedKey) {
      this.logger.warn("inbound routing fields ignored", { channel: this.channel, senderId: input.sender.id, keys: dropped, ...(refusedKey ? { sessionKey: refusedKey } : {}) });
    }
    message.metadata = { ...metadata, isDirect: input.isDirect, ...(input.sender.username ? { username: input.sender.username } : {}) };
    input.onAdmitted?.();
    await this.bus.publishInbound(message);
    return "forwarded";
  }
}

export function pairingReply(code: string): string {
  return [
    "I don't know you yet, so I can't answer.",
    `Your pairing code: ${code} (valid for 10 minutes).`,
    `Ask the owner to approve it with: /pairing approve ${code}`,
  ].join("\n");
}
