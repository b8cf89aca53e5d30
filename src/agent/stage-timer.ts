/**
 * Times the stages of a turn (restore → compact → command → build → run → save → respond) and
 * logs each at debug, so a slow turn shows where its time went.
 */
import type { Logger } from "../core/logger.js";

export type TurnStage = "restore" | "compact" | "command" | "build" | "run" | "save" | "respond";

export interface StageTiming {
  stage: TurnStage;
  ms: number;
}

export class StageTimer {
  readonly timings: StageTiming[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly sessionKey: string,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async stage<T>(stage: TurnStage, work: () => Promise<T>): Promise<T> {
    const started = this.now();
    try {
      return await work();
    } finally {
      const ms = Math.round((this.now() - started) * 100) / 100;
      this.timings.push({ stage, ms });
      this.logger.debug("turn stage", { sessionKey: this.sessionKey, stage, ms });
    }
  }
}
