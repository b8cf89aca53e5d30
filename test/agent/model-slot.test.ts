import { describe, expect, it, vi } from "vitest";
import { ModelSlot } from "../../src/agent/model-slot.js";
import { Semaphore } from "../../src/agent/semaphore.js";
import { AbortedError } from "../../src/core/errors.js";
import { EventStream } from "../../src/core/event-stream.js";
import { modelErrorEvent } from "../../src/core/llm.js";
import type { LanguageModel, ModelEvent, ModelResponse } from "../../src/core/llm.js";
import { assistantMessage, userMessage } from "../../src/core/message-helpers.js";

function countingModel(): { model: LanguageModel; calls: number } {
  const box = {
    calls: 0,
    model: {
      provider: "test",
      model: "m",
      contextWindow: 1000,
      stream() {
        box.calls++;
        const stream = new EventStream<ModelEvent, ModelResponse>(modelErrorEvent);
        stream.push({ type: "text_delta", delta: "ok" });
        stream.end({ message: assistantMessage("ok"), finishReason: "stop", usage: { promptTokens: 1, completionTokens: 1 }, provider: "test", model: "m" });
        return stream;
      },
    } as LanguageModel,
  };
  return box;
}

const request = { messages: [userMessage("hi")] };

describe("a turn's model slot", () => {
  it("takes the gate at the first model call and gives it back after an answer without tool calls", async () => {
    const gate = new Semaphore(1);
    const slot = new ModelSlot((signal) => gate.acquire(signal), new AbortController().signal);
    const inner = countingModel();
    const model = slot.wrap(inner.model);
    expect(model.contextWindow).toBe(1000);
    expect(gate.inUse).toBe(0);
    const events: ModelEvent[] = [];
    const first = model.stream(request);
    first.subscribe((e) => events.push(e));
    expect((await first.result()).message).toEqual(expect.objectContaining({ role: "assistant" }));
    expect(events.some((e) => e.type === "text_delta")).toBe(true);
    // A final answer: the model is done with this turn, so the slot is free again.
    expect(gate.inUse).toBe(0);
    await model.stream(request).result();
    expect(inner.calls).toBe(2);
    slot.give();
    slot.give();
    expect(gate.inUse).toBe(0);
  });

  it("keeps the slot while the model asks for tools", async () => {
    const gate = new Semaphore(1);
    const slot = new ModelSlot((signal) => gate.acquire(signal), new AbortController().signal);
    const call = { type: "toolCall" as const, id: "c1", name: "lookup", arguments: {}, rawArguments: "{}" };
    const toolAsking: LanguageModel = {
      provider: "test",
      model: "m",
      stream() {
        const stream = new EventStream<ModelEvent, ModelResponse>(modelErrorEvent);
        stream.end({ message: assistantMessage("", [call]), finishReason: "tool_calls", usage: { promptTokens: 1, completionTokens: 1 }, provider: "test", model: "m" });
        return stream;
      },
    };
    await slot.wrap(toolAsking).stream(request).result();
    expect(gate.inUse).toBe(1);
    slot.give();
    expect(gate.inUse).toBe(0);
  });

  it("a call while the turn holds the slot is the model's own stream, timed, and a final answer gives the slot back", async () => {
    const gate = new Semaphore(1);
    const slot = new ModelSlot((signal) => gate.acquire(signal), new AbortController().signal);
    const call = { type: "toolCall" as const, id: "c1", name: "lookup", arguments: {}, rawArguments: "{}" };
    const returned: EventStream<ModelEvent, ModelResponse>[] = [];
    let round = 0;
    const model: LanguageModel = {
      provider: "test",
      model: "m",
      stream() {
        const stream = new EventStream<ModelEvent, ModelResponse>(modelErrorEvent);
        returned.push(stream);
        const message = round++ === 0 ? assistantMessage("", [call]) : assistantMessage("done");
        stream.end({ message, finishReason: round === 1 ? "tool_calls" : "stop", usage: { promptTokens: 1, completionTokens: 1 }, provider: "test", model: "m" });
        return stream;
      },
    };
    const wrapped = slot.wrap(model);
    const first = wrapped.stream(request);
    await first.result();
    // The first call waited for the gate through a stream of its own; the model asked for a tool, so the slot is kept.
    expect(first).not.toBe(returned[0]);
    expect(gate.inUse).toBe(1);
    const second = wrapped.stream(request);
    expect(second).toBe(returned[1]);
    const answer = await second.result();
    expect(answer.finishReason).toBe("stop");
    // Settled before the caller's own continuation: the clock counts both calls and the gate is free.
    expect(slot.clock.modelCalls).toBe(2);
    expect(gate.inUse).toBe(0);
  });

  it("waits while another turn holds the slot, and fails with AbortedError when its turn is stopped first", async () => {
    const gate = new Semaphore(1);
    const holder = new ModelSlot((signal) => gate.acquire(signal), new AbortController().signal);
    await holder.take();
    const stop = new AbortController();
    const waiting = new ModelSlot((signal) => gate.acquire(signal), stop.signal);
    const inner = countingModel();
    const result = waiting.wrap(inner.model).stream(request).result();
    await Promise.resolve();
    expect(gate.waiting).toBe(1);
    stop.abort();
    await expect(result).rejects.toBeInstanceOf(AbortedError);
    expect(inner.calls).toBe(0);
    holder.give();
    expect(gate.inUse).toBe(0);
  });

  it("without a gate never waits, and still times the model calls", async () => {
    const inner = countingModel();
    const slot = new ModelSlot(undefined, new AbortController().signal);
    const model = slot.wrap(inner.model);
    await model.stream(request).result();
    await model.stream(request).result();
    expect(inner.calls).toBe(2);
    expect(slot.clock.modelCalls).toBe(2);
    expect(slot.clock.queueMs).toBe(0);
    expect(slot.clock.modelMs).toBeGreaterThanOrEqual(0);
  });

  it("keeps the turn's clock: the wait for the gate and the time inside model calls", async () => {
    let now = 1000;
    const clock = () => now;
    const gate = new Semaphore(1);
    const holder = new ModelSlot((signal) => gate.acquire(signal), new AbortController().signal, clock);
    await holder.take();
    const waiting = new ModelSlot((signal) => gate.acquire(signal), new AbortController().signal, clock);
    let answer: (() => void) | undefined;
    const slowModel: LanguageModel = {
      provider: "test",
      model: "m",
      stream() {
        const stream = new EventStream<ModelEvent, ModelResponse>(modelErrorEvent);
        answer = () => stream.end({ message: assistantMessage("ok"), finishReason: "stop", usage: { promptTokens: 1, completionTokens: 1 }, provider: "test", model: "m" });
        return stream;
      },
    };
    const answered = waiting.wrap(slowModel).stream(request).result();
    await vi.waitFor(() => expect(gate.waiting).toBe(1));
    // The other turn holds the gate for 40 ms, then the model takes 30 ms to answer.
    now += 40;
    holder.give();
    await vi.waitFor(() => expect(answer).toBeDefined());
    now += 30;
    answer!();
    await answered;
    expect(waiting.clock).toEqual({ queueMs: 40, modelMs: 30, modelCalls: 1 });
    expect(holder.clock).toEqual({ queueMs: 0, modelMs: 0, modelCalls: 0 });
    expect(gate.inUse).toBe(0);
  });
});
