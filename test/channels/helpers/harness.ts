/** Shared test pieces: a fake clock, a recording sleep, temp homes and a polling wait. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChannelClock } from "../../../src/channels/clock.js";
import type { InboundMessage, MessageBus } from "../../../src/bus/types.js";

export interface FakeClock extends ChannelClock {
  advance(ms: number): void;
  pendingTimers(): number;
}

export function fakeClock(start = 0): FakeClock {
  let now = start;
  let timers: Array<{ at: number; fn: () => void }> = [];
  return {
    now: () => now,
    setTimer(fn, ms) {
      const timer = { at: now + ms, fn };
      timers.push(timer);
      return () => {
        timers = timers.filter((t) => t !== timer);
      };
    },
    advance(ms) {
      now += ms;
      const due = timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.fn();
    },
    pendingTimers: () => timers.length,
  };
}

/** A sleep that returns at once and remembers what it was asked to wait. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  };
}

export async function tempHome(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "nanobot-channels-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Waits until `check` returns a value (not undefined/false); fails after `ms`. */
export async function waitFor<T>(check: () => T | undefined | false, what: string, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The next inbound message, or a failure naming what was expected. */
export async function nextInbound(bus: MessageBus, what = "an inbound message", ms = 5000): Promise<InboundMessage> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    return await bus.consumeInbound(controller.signal);
  } catch {
    throw new Error(`timed out waiting for ${what}`);
  } finally {
    clearTimeout(timer);
  }
}
