/**
 * One at a time per key, in arrival order: `run(key, fn)` starts `fn` once every earlier call
 * with the same key has settled. Calls with different keys do not wait for each other. A call
 * whose signal aborts while it waits never runs (`fn` is skipped and `onAborted` answers).
 */
export class KeyedSerial {
  private readonly tails = new Map<string, Promise<void>>();

  /** Keys with a call running or waiting. */
  get size(): number {
    return this.tails.size;
  }

  async run<T>(key: string, fn: () => Promise<T>, options: { signal?: AbortSignal; onAborted?: () => T } = {}): Promise<T> {
    const before = this.tails.get(key);
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    // The next call waits for this one and, through it, for every earlier one.
    const tail = before ? before.then(() => mine) : mine;
    this.tails.set(key, tail);
    try {
      if (before && !(await waitUnlessAborted(before, options.signal)) && options.onAborted) return options.onAborted();
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

/** True once `turn` has come, false when `signal` aborted first. */
function waitUnlessAborted(turn: Promise<void>, signal: AbortSignal | undefined): Promise<boolean> {
  if (!signal) return turn.then(() => true);
  if (signal.aborted) return Promise.resolve(false);
  return new Promise<boolean>((resolve) => {
    const onAbort = (): void => resolve(false);
    signal.addEventListener("abort", onAbort, { once: true });
    void turn.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    });
  });
}
