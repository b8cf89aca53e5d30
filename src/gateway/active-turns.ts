/**
 * The turns the gateway is running right now, each with its AbortController, so a stop
 * request, a request timeout or a shutdown can abort them and wait until they are saved.
 */

interface RunningTurn {
  sessionKey: string;
  controller: AbortController;
  done: Promise<unknown>;
}

export class ActiveTurns {
  private readonly turns = new Set<RunningTurn>();

  get size(): number {
    return this.turns.size;
  }

  /** Sessions with at least one running turn. */
  get sessionCount(): number {
    return new Set([...this.turns].map((t) => t.sessionKey)).size;
  }

  /**
   * Runs `fn` with a signal aborted by `stop`, `stopAll` or any of `signals` (client gone,
   * timeout). The turn is tracked until `fn` settles.
   */
  async run<T>(sessionKey: string, signals: readonly AbortSignal[], fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    for (const s of signals) {
      if (s.aborted) controller.abort();
      else s.addEventListener("abort", onAbort, { once: true });
    }
    const done = fn(controller.signal);
    const turn: RunningTurn = { sessionKey, controller, done };
    this.turns.add(turn);
    try {
      return await done;
    } finally {
      this.turns.delete(turn);
      for (const s of signals) s.removeEventListener("abort", onAbort);
    }
  }

  /** Whether a turn of this session is running. */
  isRunning(sessionKey: string): boolean {
    for (const t of this.turns) if (t.sessionKey === sessionKey) return true;
    return false;
  }

  /** Aborts the session's running turns; resolves to how many were stopped. */
  stop(sessionKey: string): number {
    let count = 0;
    for (const t of this.turns) {
      if (t.sessionKey !== sessionKey) continue;
      t.controller.abort();
      count++;
    }
    return count;
  }

  /** Aborts every running turn and waits until each one has settled (and so was saved). */
  async stopAll(): Promise<void> {
    const pending = [...this.turns];
    for (const t of pending) t.controller.abort();
    await Promise.allSettled(pending.map((t) => t.done));
  }
}
