/**
 * One turn's view of the AgentLoop's concurrency gate: the slot is taken when the turn first
 * calls its model (a consolidation summary or the engine's first request) and given back when
 * the model answers without asking for a tool — the turn's last call, as a rule — or when its
 * engine run ends. Loading history, building the prompt, opening the turn and saving it — and
 * slash commands, which call no model — run outside it, so a slot is held for the model's and
 * the tools' time, which is what the gate exists to bound. A turn that calls the model again
 * after all (a queued message injected, a structured-output correction) takes a slot again.
 *
 * It also keeps the turn's clock for the gate: how long the turn waited for a slot and how long
 * its model calls took — the run's and a consolidation summary's before it — so a face can say
 * where a slow answer's time went (`Server-Timing`).
 */
import { EventStream } from "../core/event-stream.js";
import { modelErrorEvent } from "../core/llm.js";
import type { LanguageModel, LLMRequest, ModelEvent, ModelResponse, ModelStream } from "../core/llm.js";
import { hasToolCalls } from "../core/message-helpers.js";
import { forwardEvents } from "../providers/forward.js";

export type AcquireSlot = (signal: AbortSignal) => Promise<() => void>;

/** A turn's time at the gate, ms. */
export interface SlotClock {
  /** Waiting for a slot (0 without a gate, or when one was free). */
  queueMs: number;
  /** Inside model calls, from the request to the complete answer. */
  modelMs: number;
  modelCalls: number;
}

export class ModelSlot {
  readonly clock: SlotClock = { queueMs: 0, modelMs: 0, modelCalls: 0 };
  private release: (() => void) | undefined;
  private pending: Promise<void> | undefined;

  /** Without `acquire` (no gate) the slot is never waited for; model calls are still timed. */
  constructor(
    private readonly acquire: AcquireSlot | undefined,
    private readonly signal: AbortSignal,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Waits for the slot unless this turn holds it already; rejects when the turn is aborted first. */
  take(): Promise<void> {
    if (!this.acquire) return Promise.resolve();
    if (!this.pending) {
      const asked = this.now();
      this.pending = this.acquire(this.signal).then((release) => {
        this.clock.queueMs += this.now() - asked;
        this.release = release;
      });
    }
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
    return this.gated(model, true);
  }

  /**
   * `model` for a call on the way to the turn's run (a consolidation summary): it takes the slot
   * and counts in the turn's model time, and keeps the slot for the run that follows.
   */
  clocked(model: LanguageModel): LanguageModel {
    return this.gated(model, false);
  }

  /** Held by this turn (or there is no gate): a call need not wait for it. */
  private get held(): boolean {
    return !this.acquire || this.release !== undefined;
  }

  /** `inner` as it is, timed (and the slot given back after a final answer) through its result. */
  private timed(inner: ModelStream, giveAfterFinalAnswer: boolean): ModelStream {
    const started = this.now();
    // Registered before the caller's own reactions: the clock and the slot are settled first.
    inner.result().then(
      (response) => {
        this.count(started);
        if (giveAfterFinalAnswer && !hasToolCalls(response.message)) this.give();
      },
      () => this.count(started),
    );
    return inner;
  }

  private count(started: number): void {
    this.clock.modelMs += this.now() - started;
    this.clock.modelCalls++;
  }

  private gated(model: LanguageModel, giveAfterFinalAnswer: boolean): LanguageModel {
    return {
      provider: model.provider,
      model: model.model,
      ...(model.contextWindow !== undefined ? { contextWindow: model.contextWindow } : {}),
      // A slot already held (a turn's later calls, or no gate at all): the model's own stream,
      // without a layer of events around it; otherwise wait for the slot first.
      stream: (request, signal) =>
        this.held ? this.timed(model.stream(request, signal), giveAfterFinalAnswer) : this.afterTaking(model, request, signal, giveAfterFinalAnswer),
    };
  }

  private afterTaking(model: LanguageModel, request: LLMRequest, signal: AbortSignal | undefined, giveAfterFinalAnswer: boolean): ModelStream {
    return EventStream.run<ModelEvent, ModelResponse>(modelErrorEvent, async (out) => {
      await this.take();
      const inner = this.timed(model.stream(request, signal), giveAfterFinalAnswer);
      await forwardEvents(inner, out);
      return inner.result();
    });
  }
}
