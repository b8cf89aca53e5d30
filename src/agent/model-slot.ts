/**
 * One turn's view of the AgentLoop's concurrency gate: the slot is taken when the turn first
 * calls its model (a consolidation summary or the engine's first request) and given back when
 * the model answers without asking for a tool — the turn's last call, as a rule — or when its
 * engine run ends. Loading history, building the prompt, opening the turn and saving it — and
 * slash commands, which call no model — run outside it, so a slot is held for the model's and
 * the tools' time, which is what the gate exists to bound. A turn that calls the model again
 * after all (a queued message injected, a structured-output correction) takes a slot again.
 */
import { EventStream } from "../core/event-stream.js";
import { modelErrorEvent } from "../core/llm.js";
import type { LanguageModel, ModelEvent, ModelResponse } from "../core/llm.js";
import { toolCallsOf } from "../core/message-helpers.js";
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

  /** `model`, taking the slot before each call (a no-op once held) and giving it back after a final answer. */
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
          const response = await inner.result();
          if (toolCallsOf(response.message).length === 0) this.give();
          return response;
        }),
    };
  }
}
