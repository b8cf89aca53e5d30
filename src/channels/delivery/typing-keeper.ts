/**
 * Keeps a typing indicator alive. Platforms show "typing…" for a few seconds only (Telegram:
 * 5 s), while a turn can take minutes; the indicator is repeated until the reply arrives
 * (`stop`) or `maxMs` has passed, so a lost reply never leaves the bot typing forever.
 */
import type { ChannelClock } from "../clock.js";

export interface TypingKeeperOptions {
  clock: ChannelClock;
  /** Sends one indicator; failures are the sender's to swallow. */
  send: (chatId: string) => Promise<void>;
  refreshMs?: number;
  maxMs?: number;
}

export class TypingKeeper {
  private readonly active = new Map<string, () => void>();
  private readonly refreshMs: number;
  private readonly maxMs: number;

  constructor(private readonly options: TypingKeeperOptions) {
    this.refreshMs = options.refreshMs ?? 4000;
    this.maxMs = options.maxMs ?? 120_000;
  }

  async start(chatId: string): Promise<void> {
    this.stop(chatId);
    const startedAt = this.options.clock.now();
    let cancel = (): void => undefined;
    const tick = (): void => {
      if (this.options.clock.now() - startedAt >= this.maxMs) {
        this.active.delete(chatId);
        return;
      }
      cancel = this.options.clock.setTimer(tick, this.refreshMs);
      void this.options.send(chatId).catch(() => undefined);
    };
    cancel = this.options.clock.setTimer(tick, this.refreshMs);
    this.active.set(chatId, () => cancel());
    await this.options.send(chatId);
  }

  stop(chatId: string): void {
    this.active.get(chatId)?.();
    this.active.delete(chatId);
  }

  stopAll(): void {
    for (const cancel of this.active.values()) cancel();
    this.active.clear();
  }
}
