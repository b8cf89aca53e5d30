import type { CronClock } from "../../src/cron/cron-service.js";

/** A manual clock: timers fire only when the test advances time. */
export class FakeClock implements CronClock {
  private timers: Array<{ id: number; at: number; callback: () => void }> = [];
  private nextId = 1;

  constructor(public current: number) {}

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.push({ id, at: this.current + ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  /** Moves time forward, firing due timers in time order. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.current = Math.max(this.current, due.at);
      due.callback();
    }
    this.current = target;
  }
}
