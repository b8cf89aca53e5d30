/**
 * What a channel gives the shared channel test kit: a way to start the real channel (through the
 * ChannelManager) against its platform fake, and the platform's view of what the bot did.
 */
import type { InProcessBus } from "../../../src/bus/in-process-bus.js";
import type { BusError } from "../../../src/bus/types.js";
import type { PairingStore } from "../../../src/channels/access/pairing-store.js";
import type { FakeClock } from "../helpers/harness.js";

export interface KitUser {
  id: string;
  username: string;
}

export interface KitAttachment {
  name: string;
  mimeType: string;
  content: string;
}

/** How a group message addresses the bot. */
export type KitAddress = "none" | "mention" | "reply";

export type KitWhere = { chat: "dm" } | { chat: "group"; address: KitAddress };

/** One message the bot posted, as the platform recorded it. */
export interface KitSent {
  chatId: string;
  /** The text as it stands now (after edits). */
  text: string;
  /** Every edit, in order. */
  edits: string[];
  /** The platform message id this one replies to. */
  replyTo?: string;
  /** Uploaded files (name and UTF-8 content). */
  files: Array<{ name: string; content: string }>;
}

export interface KitSession {
  bus: InProcessBus;
  store: PairingStore;
  clock: FakeClock;
  /** Waits the delivery queue asked for between retries (returned at once). */
  waits: number[];
  busErrors: BusError[];
  home: string;
  /** Where a user's direct messages and the bot's replies to them live. */
  dmChat(user: KitUser): string;
  /** The group chat's id. */
  groupChat: string;
  /** A user writes to the bot; resolves to the platform's message id once the platform accepted it. */
  userSays(user: KitUser, text: string, where: KitWhere, attachment?: KitAttachment): Promise<string>;
  /** The bot's messages, oldest first. */
  sent(): KitSent[];
  /** The next `count` message sends fail with a server error (HTTP 5xx). */
  failNextSends(count: number): void;
  /** Cuts the platform connection (long poll, gateway socket) as a network drop would. */
  dropConnection(): Promise<void>;
  /** How many times the channel (re)connected to the platform's event stream so far. */
  connections(): number;
  /** Chat ids the platform was told "typing…" for, in order (one entry per indicator sent). */
  typing(): string[];
  close(): Promise<void>;
}

export interface KitStartOptions {
  /** Settings beside the channel under `channels` (sendMaxRetries, …). */
  switches?: Record<string, unknown>;
}

export interface KitPlatform {
  /** The channel's name (`channels.<name>`). */
  channel: string;
  /** The platform's message length limit. */
  textLimit: number;
  /** Whether streamed replies are previewed by editing one message. */
  edits: boolean;
  /**
   * How the platform shows that the bot is working: `true` when it has a typing indicator the
   * channel sends from the moment a message is forwarded until the reply is sent; a string
   * saying why not when it has none (the kit then checks that nothing is sent for it).
   */
  typing: true | string;
  /**
   * Whether the platform has group chats that address the bot by mention or reply: `true` (the
   * default), or a string saying why not (the kit then checks that a group chat's message is not
   * forwarded while the sender's own direct messages are).
   */
  groups?: true | string;
  /**
   * What the agent receives for a group message: channels that name the speaker (NapCat, as
   * Python's does: "alice: hi") say so here; unset means the text as typed.
   */
  groupContent?(user: KitUser, text: string): string;
  /** How often the channel repeats the typing indicator while the agent works (ms). */
  typingRefreshMs?: number;
  users: { alice: KitUser; mallory: KitUser };
  /** Channel settings that make the bot thread its reply to the asking message. */
  replyConfig: Record<string, unknown>;
  /** Starts the channel with `config` merged into its entry (allowFrom, groupPolicy, streaming, …). */
  start(config: Record<string, unknown>, options?: KitStartOptions): Promise<KitSession>;
  /** Whether every code block opened in a sent text is closed in the same text. */
  codeBlocksClosed(text: string): boolean;
}
