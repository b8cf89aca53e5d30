/**
 * One turn's view of the AgentLoop's concurrency gate: the slot is taken when the turn first
 * calls its model (a consolidation summary or the engine's first request) and given back when
 * its engine run ends. Loading history, building the prompt, opening the turn and saving it —
 * and slash commands, which call no model — run outside it, so a slot is held for the model's
 * time, which is what the gate exists to bound.
 */
import { EventStream } from "../core/event-stream.js";
import { modelErrorEvent } from "../core/llm.js";
import type { LanguageModel, ModelEvent, ModelResponse } from "../core/llm.js";
import { forwardEvents } from "../providers/forward.js";

export type AcquireSlot = (signal: AbortSignal) => Promise<() => void>;

export class ModelSlot {
  private release: (() => void) | undefined;
  private pending: Promise<void> | undefined;

  /** Without `acquire` (no gate) every method is a no-op. */
  constructor(
    private readonly acquire: AcquireSlot | undefined,
    private readonly signal: AbortSignal,
  ) {}

  /** Waits for the slot unless this turn holds it already; rejects when the turn is aborted first. */
  take(): Promise<void> {
    if (!this.acquire) return Promise.resolve();
    this.pending ??= this.acquire(this.signal).then((release) => {
      this.release = release;
    });
    return this.pending;
  }

  give(): void {
    const release = this.release;
    this.release = undefined;
    this.pending = undefined;
    release?.();
  }

  /** `model`, taking the slot before each call (a no-op once held). */
  wrap(model: LanguageModel): LanguageModel {
    if (!this.acquire) return model;
    return {
      provider: model.provider,
      model: model.model,
      ...(model.contextWindow !== undefined ? { contextWindow: model.contextWindow } : {}),
      stream: (request, signal) =>
        EventStream.run<ModelEvent, ModelResponse>(modelErrorEvent, async (out) => {
          await this.take();
          const inner = model.stream(request, signal);
          await forwardEvents(inner, out);
          return inner.result();
        }),
    };
  }
}
