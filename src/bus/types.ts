/**
 * The message bus vocabulary: what channels put in (inbound) and what the agent layer sends
 * out (outbound). Channels and the gateway know only these types, never the engine.
 */

/** A media attachment on a message, by local path or URL. */
export interface MediaItem {
  kind: "image" | "audio" | "video" | "document";
  mimeType?: string;
  name?: string;
  /** Local file (downloaded by the channel) or remote URL. */
  path?: string;
  url?: string;
}

export interface InboundMessage {
  /** Unique per message; channels use the platform's id where it has one (dedupe). */
  id: string;
  channel: string;
  chatId: string;
  senderId: string;
  content: string;
  media?: MediaItem[];
  /**
   * Channel specifics: platform message id, group flag, mention, reply-to, … The agent layer
   * also reads `agent` (which agent answers) here; only in-process publishers may set it: the
   * InboundGate drops it, and the other routing keys, from platform messages.
   */
  metadata?: Record<string, unknown>;
  /** Overrides the default `channel:chatId` session key (unified sessions, threads). */
  sessionKey?: string;
  /** Epoch ms. */
  receivedAt: number;
}

interface OutboundBase {
  channel: string;
  chatId: string;
  metadata?: Record<string, unknown>;
}

/**
 * What the agent layer sends to a channel. `message.id` is the delivery id: a channel that
 * sees the same id twice must not deliver it twice (retried or resumed turns).
 */
export type OutboundMessage =
  | (OutboundBase & { kind: "message"; id: string; content: string; media?: MediaItem[]; replyTo?: string })
  /**
   * A streamed piece of the reply; `streamId` groups the deltas of one reply. `replyTo` is the
   * asking message, as on `message`: the preview goes where the final reply would (its thread).
   */
  | (OutboundBase & { kind: "delta"; streamId: string; delta: string; replyTo?: string })
  /** The streamed reply is complete; `content` is the whole text. */
  | (OutboundBase & { kind: "stream_end"; streamId: string; id: string; content: string; replyTo?: string })
  /** Tool activity or other progress worth showing ("exec: npm test"), for the message `replyTo`. */
  | (OutboundBase & { kind: "progress"; text: string; toolName?: string; replyTo?: string })
  | (OutboundBase & { kind: "typing" });

export type OutboundKind = OutboundMessage["kind"];

/** A failure inside the bus machinery, reported instead of being lost. */
export interface BusError {
  type: "outbound_handler_error" | "inbound_overflow";
  error: unknown;
  channel?: string;
  message?: InboundMessage | OutboundMessage;
}

export interface OutboundFilter {
  channel?: string;
  kinds?: readonly OutboundKind[];
}

export interface MessageBus {
  /** Queues a message for the agent layer. */
  publishInbound(message: InboundMessage): Promise<void>;
  /** Waits for the next inbound message; rejects with AbortedError when `signal` aborts. */
  consumeInbound(signal?: AbortSignal): Promise<InboundMessage>;
  /** Delivers a message to every matching outbound subscriber; handler failures become BusErrors. */
  publishOutbound(message: OutboundMessage): Promise<void>;
  subscribeOutbound(handler: (message: OutboundMessage) => void | Promise<void>, filter?: OutboundFilter): () => void;
  onError(handler: (error: BusError) => void): () => void;
  /** Inbound messages waiting to be consumed. */
  inboundSize(): number;
}
