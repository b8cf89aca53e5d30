/**
 * Who may talk to the agent through one channel. `allowFrom: ["*"]` is open; a list admits
 * exact sender ids (and `@username` where the platform has usernames); an empty list means
 * pairing: unknown direct-message senders get a code the owner approves. Approved senders are
 * admitted in both modes. Group messages from unknown senders are always refused.
 */
import type { PairingStore } from "./pairing-store.js";
import { isInternalChannel } from "../types.js";
import type { SenderIdentity } from "../types.js";

export type AccessDecision =
  | { kind: "allow"; via: "wildcard" | "allowFrom" | "pairing" }
  /** Unknown direct sender in pairing mode: reply with the code, forward nothing. */
  | { kind: "pair"; code: string; expiresAt: number; isNew: boolean }
  | { kind: "deny"; reason: "group_unknown_sender" | "not_allowed" };

export interface AccessControlOptions {
  channel: string;
  /** `channels.<name>.allowFrom` as configured (the schema defaults it to `[]`). */
  allowFrom: readonly string[];
  /** Without a store, pairing is off and unknown senders are refused. */
  store?: PairingStore;
}

export interface AccessRequest {
  sender: SenderIdentity;
  /** A one-to-one chat with the bot (not a group or channel). */
  isDirect: boolean;
  chatId?: string;
}

export class AccessControl {
  readonly channel: string;
  private readonly wildcard: boolean;
  private readonly ids: ReadonlySet<string>;
  private readonly usernames: ReadonlySet<string>;
  private readonly store?: PairingStore;

  constructor(options: AccessControlOptions) {
    // The agent layer trusts these names for its own messages; no platform may speak as them.
    if (isInternalChannel(options.channel)) {
      throw new Error(`channel name "${options.channel}" is reserved for internal messages`);
    }
    this.channel = options.channel;
    const entries = options.allowFrom.map((e) => e.trim()).filter((e) => e.length > 0);
    this.wildcard = entries.includes("*");
    this.ids = new Set(entries.filter((e) => !e.startsWith("@")));
    this.usernames = new Set(entries.filter((e) => e.startsWith("@")).map((e) => e.slice(1).toLowerCase()));
    this.store = options.store;
  }

  /** True when no list is configured: unknown direct senders are offered a pairing code. */
  get pairingMode(): boolean {
    return !this.wildcard && this.ids.size === 0 && this.usernames.size === 0;
  }

  async check(request: AccessRequest): Promise<AccessDecision> {
    const { sender } = request;
    if (this.wildcard) return { kind: "allow", via: "wildcard" };
    if (this.ids.has(sender.id)) return { kind: "allow", via: "allowFrom" };
    if (sender.username && this.usernames.has(sender.username.replace(/^@/, "").toLowerCase())) {
      return { kind: "allow", via: "allowFrom" };
    }
    if (this.store && (await this.store.isApproved(this.channel, sender))) return { kind: "allow", via: "pairing" };
    if (!request.isDirect) return { kind: "deny", reason: "group_unknown_sender" };
    if (!this.pairingMode || !this.store) return { kind: "deny", reason: "not_allowed" };
    const pairing = await this.store.requestCode({
      channel: this.channel,
      senderId: sender.id,
      username: sender.username,
      chatId: request.chatId,
    });
    return { kind: "pair", ...pairing };
  }
}
