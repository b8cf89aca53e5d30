import { AbortedError } from "../../src/core/errors.js";
import type { LanguageModel, LLMRequest, ModelEvent, ModelResponse, ModelStream } from "../../src/core/llm.js";
import { userMessage } from "../../src/core/message-helpers.js";
import type { FakeLLM } from "../fakes/fake-llm-types.js";
import { adapterFor } from "../../src/providers/adapters.js";
import type { SleepFunction } from "../../src/providers/timing.js";
import type { ModelTarget, WireApi } from "../../src/providers/types.js";

/** A target pointing at the fake for the given wire API. */
export function targetFor(fake: FakeLLM, api: WireApi, extra: Partial<ModelTarget> = {}): ModelTarget {
  return {
    provider: api === "anthropic" ? "anthropic" : "openai",
    model: api === "anthropic" ? "claude-test" : "gpt-test",
    api,
    baseURL: api === "anthropic" ? fake.anthropicBaseURL : fake.openaiBaseURL,
    apiKey: "sk-test",
    ...extra,
  };
}

export const ask = (text: string, extra: Partial<LLMRequest> = {}): LLMRequest => ({ messages: [userMessage(text)], ...extra });

export interface Collected {
  events: ModelEvent[];
  response?: ModelResponse;
  error?: unknown;
}

/** Drains a stream, keeping every event and the outcome (never throws). */
export async function collect(stream: ModelStream): Promise<Collected> {
  const events: ModelEvent[] = [];
  for await (const e of stream) events.push(e);
  try {
    return { events, response: await stream.result() };
  } catch (error) {
    return { events, error };
  }
}

export const deltas = (events: ModelEvent[], type: "text_delta" | "reasoning_delta"): string =>
  events.map((e) => (e.type === type ? e.delta : "")).join("");

export const weatherTool = {
  name: "get_weather",
  description: "Weather for a city",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/** A bare adapter-backed LanguageModel for the fake (no decorators). */
export function rawModel(fake: FakeLLM, api: WireApi, extra: Partial<ModelTarget> = {}): LanguageModel {
  const target = targetFor(fake, api, extra);
  return { provider: target.provider, model: target.model, stream: (req, signal) => adapterFor(api)(target, req, signal) };
}

/** A sleep that records the requested waits and returns at once. */
export function recordingSleep(): { waits: number[]; sleep: SleepFunction } {
  const waits: number[] = [];
  return {
    waits,
    sleep: (ms, signal) => {
      waits.push(ms);
      return signal?.aborted ? Promise.reject(new AbortedError()) : Promise.resolve();
    },
  };
}
