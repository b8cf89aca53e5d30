/**
 * A one-shot timer that can be held: time spent held (a tool call waiting on the user's answer
 * to an elicitation) does not count against the call's timeout. Holds nest.
 */
export class PausableTimer {
  private timer: NodeJS.Timeout | undefined;
  private remainingMs: number;
  private startedAt = 0;
  private holds = 0;
  private done = false;

  constructor(ms: number, private readonly onFire: () => void) {
    this.remainingMs = ms;
    this.run();
  }

  /** Stops the clock until the returned function is called (once). */
  hold(): () => void {
    if (this.done) return () => undefined;
    if (this.holds++ === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.remainingMs = Math.max(0, this.remainingMs - (Date.now() - this.startedAt));
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.holds === 0 && !this.done) this.run();
    };
  }

  clear(): void {
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private run(): void {
    this.startedAt = Date.now();
    this.timer = setTimeout(() => {
      this.done = true;
      this.onFire();
    }, this.remainingMs);
  }
}
