import { AbortedError } from "../core/errors.js";
import type { BusError, InboundMessage, MessageBus, OutboundFilter, OutboundMessage } from "./types.js";

interface Subscriber {
  handler: (message: OutboundMessage) => void | Promise<void>;
  filter?: OutboundFilter;
}

/**
 * The in-process bus: an unbounded FIFO for inbound messages with waiting consumers, and a
 * fan-out for outbound ones. Outbound handlers run concurrently; a handler that throws or
 * rejects is reported through `onError` and never breaks delivery to the others.
 */
export class InProcessBus implements MessageBus {
  private readonly inbound: InboundMessage[] = [];
  private readonly waiters: Array<{ resolve: (m: InboundMessage) => void; reject: (e: unknown) => void; signal?: AbortSignal; onAbort?: () => void }> = [];
  private readonly subscribers = new Set<Subscriber>();
  private readonly errorHandlers = new Set<(error: BusError) => void>();

  publishInbound(message: InboundMessage): Promise<void> {
    const waiter = this.waiters.shift();
    if (waiter) {
      if (waiter.signal && waiter.onAbort) waiter.signal.removeEventListener("abort", waiter.onAbort);
      waiter.resolve(message);
    } else {
      this.inbound.push(message);
    }
    return Promise.resolve();
  }

  consumeInbound(signal?: AbortSignal): Promise<InboundMessage> {
    if (signal?.aborted) return Promise.reject(new AbortedError("consumeInbound aborted"));
    const next = this.inbound.shift();
    if (next) return Promise.resolve(next);
    return new Promise<InboundMessage>((resolve, reject) => {
      const waiter: (typeof this.waiters)[number] = { resolve, reject, signal };
      if (signal) {
        waiter.onAbort = () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(new AbortedError("consumeInbound aborted"));
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
    });
  }

  async publishOutbound(message: OutboundMessage): Promise<void> {
    const deliveries: Promise<void>[] = [];
    for (const sub of this.subscribers) {
      if (!matches(sub.filter, message)) continue;
      deliveries.push(
        (async () => {
          try {
            await sub.handler(message);
          } catch (error) {
            this.reportError({ type: "outbound_handler_error", error, channel: message.channel, message });
          }
        })(),
      );
    }
    await Promise.all(deliveries);
  }

  subscribeOutbound(handler: Subscriber["handler"], filter?: OutboundFilter): () => void {
    const sub: Subscriber = { handler, filter };
    this.subscribers.add(sub);
    return () => {
      this.subscribers.delete(sub);
    };
  }

  onError(handler: (error: BusError) => void): () => void {
    this.errorHandlers.add(handler);
    return () => {
      this.errorHandlers.delete(handler);
    };
  }

  inboundSize(): number {
    return this.inbound.length;
  }

  private reportError(error: BusError): void {
    for (const handler of this.errorHandlers) {
      try {
        handler(error);
      } catch {
        // An error reporter that fails has nowhere left to report to.
      }
    }
  }
}

function matches(filter: OutboundFilter | undefined, message: OutboundMessage): boolean {
  if (!filter) return true;
  if (filter.channel !== undefined && filter.channel !== message.channel) return false;
  if (filter.kinds && !filter.kinds.includes(message.kind)) return false;
  return true;
}
