/**
 * Delivery of one bus turn: engine events become outbound messages (`progress` for tool calls
 * and for the text the model wrote before them, `delta`s when the channel asked for streaming),
 * and the reply becomes the final `message`
 * (or `stream_end`) whose id is the turn id, so a retried delivery is recognisably the same.
 * Publishes are chained so a channel sees them in order.
 */
import type { MessageBus, OutboundMessage } from "../bus/types.js";
import type { AgentEvent } from "../core/events.js";
import { toolHint } from "./tool-hints.js";
import type { TurnReply } from "./turn-processor.js";

export interface ReplyRoute {
  channel: string;
  chatId: string;
  /** The inbound message asked for streamed deltas (`metadata.stream === true`). */
  stream: boolean;
  /** Platform message id to reply to, when the channel gave one. */
  replyTo?: string;
  /** The inbound message id (commands use it as their delivery id). */
  inboundId?: string;
}

export interface RelayOptions {
  /** `agents.defaults.toolHintMaxLength`: how much of a tool's argument a hint shows. */
  toolHintMaxLength?: number;
}

export class OutboundRelay {
  private chain: Promise<void> = Promise.resolve();
  private streamId: string | undefined;
  private streamed = false;
  /** What the model wrote in the current round, sent as progress when it goes on to call tools. */
  private roundText = "";
  /** Set by the turn's `message` tool when it already answered in this conversation. */
  suppressed = false;

  constructor(
    private readonly bus: MessageBus,
    readonly route: ReplyRoute,
    private readonly onFailure: (error: unknown, message: OutboundMessage) => void,
    private readonly options: RelayOptions = {},
  ) {}

  begin(turnId: string): void {
    this.streamId = turnId;
  }

  /** The engine-event subscriber for this turn. */
  readonly onEvent = (event: AgentEvent): void => {
    // Deltas and progress name the asking message too: a channel answering two threads at once
    // must know which one each belongs to.
    const base = { channel: this.route.channel, chatId: this.route.chatId, ...(this.route.replyTo ? { replyTo: this.route.replyTo } : {}) };
    if (event.type === "llm_request") {
      this.roundText = "";
    } else if (event.type === "text_delta" && this.route.stream && this.streamId) {
      this.streamed = true;
      this.publish({ ...base, kind: "delta", streamId: this.streamId, delta: event.delta });
    } else if (event.type === "text_delta") {
      this.roundText += event.delta;
    } else if (event.type === "tool_call") {
      // As the Python nanobot: the model's text before its tool calls is progress (unless streamed), then the hint.
      const thought = this.roundText.trim();
      this.roundText = "";
      if (thought) this.publish({ ...base, kind: "progress", text: thought });
      const text = toolHint(event.toolCall.name, event.toolCall.arguments, this.options.toolHintMaxLength);
      this.publish({ ...base, kind: "progress", text, toolName: event.toolCall.name });
    }
    // retry_wait: not sent to chats (the Python nanobot keeps these diagnostics off every channel); the terminal shows it.
  };

  /** Sends the final reply (nothing for a stopped turn or one the `message` tool answered). */
  async finish(reply: TurnReply): Promise<void> {
    const base = { channel: this.route.channel, chatId: this.route.chatId, ...(this.route.replyTo ? { replyTo: this.route.replyTo } : {}) };
    const id = reply.turnId ?? `${this.route.inboundId ?? "reply"}:command`;
    let content = reply.content;
    if (reply.stopReason === "error") content = content || `Sorry, I could not answer: ${reply.error ?? "the model failed"}`;
    if (reply.stopReason === "aborted") content = "";
    // Notes (a message cut to fit the model) go first, as their own message: the user must see them.
    if (reply.warnings?.length) this.publish({ ...base, kind: "message", id: `${id}:note`, content: reply.warnings.map((w) => `Note: ${w}`).join("\n") });
    if (this.streamed && this.streamId) {
      // A started stream is always closed, even when the reply itself is suppressed.
      this.publish({ ...base, kind: "stream_end", streamId: this.streamId, id, content: this.suppressed ? "" : content });
    } else if (content && !this.suppressed) {
      this.publish({ ...base, kind: "message", id, content });
    }
    await this.flush();
  }

  /** Sends a standalone message (command answers, error notices). */
  async send(id: string, content: string): Promise<void> {
    this.publish({ kind: "message", id, content, channel: this.route.channel, chatId: this.route.chatId });
    await this.flush();
  }

  flush(): Promise<void> {
    return this.chain;
  }

  private publish(message: OutboundMessage): void {
    this.chain = this.chain.then(async () => {
      try {
        await this.bus.publishOutbound(message);
      } catch (error) {
        this.onFailure(error, message);
      }
    });
  }
}
