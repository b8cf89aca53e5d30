/** Time as channels see it: injectable so rate limits are tested without real waiting. */
export interface ChannelClock {
  now(): number;
  /** Runs `fn` after `ms`; returns a cancel function. */
  setTimer(fn: () => void, ms: number): () => void;
}

export const systemClock: ChannelClock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};
