/**
 * The daemon's incoming messages: `GET /api/v1/events`, a Server-Sent Events stream whose
 * `receive` events carry `{ envelope, account }`. A stream that ends or fails is re-opened: at
 * once the first time, then after 1 s, 2 s, 4 s … 30 s (reset once a stream is open again).
 */
import { createParser } from "eventsource-parser";
import { errorMessage } from "../../core/errors.js";
import type { ChannelClock } from "../clock.js";

const MAX_DELAY_MS = 30_000;

export function reconnectDelayMs(failures: number): number {
  return failures === 0 ? 0 : Math.min(1000 * 2 ** (failures - 1), MAX_DELAY_MS);
}

export interface EventStreamOptions {
  baseUrl: string;
  clock: ChannelClock;
  /** Runs before each stream is opened (daemon check, account settings); a throw counts as a failed attempt. */
  prepare?: () => Promise<void>;
  onReceive: (params: Record<string, unknown>) => void;
  onOpen: () => void;
  onDown: (reason: string) => void;
}

export class SignalEventStream {
  private readonly controller = new AbortController();
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(private readonly options: EventStreamOptions) {}

  /** Opens the first stream; resolves once it is open, rejects when the first attempt fails. */
  async start(): Promise<void> {
    await this.open();
    this.loop = this.supervise();
  }

  async stop(): Promise<void> {
    this.controller.abort();
    this.wake?.();
    await this.loop;
  }

  private current: Promise<void> | undefined;

  private async open(): Promise<void> {
    const signal = this.controller.signal;
    await this.options.prepare?.();
    const response = await fetch(`${this.options.baseUrl}/api/v1/events`, { headers: { accept: "text/event-stream" }, signal });
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new Error(`signal-cli events stream at ${this.options.baseUrl}: HTTP ${response.status}`);
    }
    this.options.onOpen();
    this.current = this.read(response.body);
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const parser = createParser({
      onEvent: (event) => {
        if (event.event !== undefined && event.event !== "receive") return;
        let data: unknown;
        try {
          data = JSON.parse(event.data);
        } catch {
          return;
        }
        if (typeof data === "object" && data !== null && !Array.isArray(data)) this.options.onReceive(data as Record<string, unknown>);
      },
    });
    const decoder = new TextDecoder();
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    } finally {
      reader.releaseLock();
    }
  }

  /** Waits for the open stream to end, then re-opens it until stopped. */
  private async supervise(): Promise<void> {
    let failures = 0;
    const signal = this.controller.signal;
    while (!signal.aborted) {
      try {
        await this.current;
        if (signal.aborted) return;
        this.options.onDown("signal-cli events stream ended");
      } catch (error) {
        if (signal.aborted) return;
        this.options.onDown(`signal-cli events stream failed: ${errorMessage(error)}`);
      }
      this.current = undefined;
      while (!signal.aborted && !this.current) {
        await this.sleep(reconnectDelayMs(failures++));
        if (signal.aborted) return;
        try {
          await this.open();
          failures = 0;
        } catch (error) {
          if (!signal.aborted) this.options.onDown(`signal-cli daemon unreachable: ${errorMessage(error)}`);
        }
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const cancel = this.options.clock.setTimer(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        cancel();
        this.wake = undefined;
        resolve();
      };
    });
  }
}
