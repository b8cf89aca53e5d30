/**
 * The per-request time limit of a gateway turn, with a hold: while the user fills in a form a
 * tool's MCP server asked for (elicitation), the clock stops, so a slow answer does not cost
 * the turn its budget. Disposed when the turn settles (the timer must not keep the process up).
 */
import { PausableTimer } from "../mcp/pausable-timer.js";

export class TurnDeadline {
  private readonly controller = new AbortController();
  private readonly timer: PausableTimer;

  constructor(readonly timeoutMs: number) {
    this.timer = new PausableTimer(timeoutMs, () => this.controller.abort(new Error(`the turn took longer than ${timeoutMs} ms`)));
  }

  /** Aborted when the limit is reached. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get expired(): boolean {
    return this.controller.signal.aborted;
  }

  /** Stops the clock until the returned function is called. */
  hold(): () => void {
    return this.timer.hold();
  }

  dispose(): void {
    this.timer.clear();
  }
}
