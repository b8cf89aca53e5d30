/**
 * Types shared by the provider adapters, the registry and the decorators. Everything above
 * this folder sees only `LanguageModel` (src/core/llm.ts); these are the provider layer's own.
 */
import type { LLMRequest, ModelStream } from "../core/llm.js";

/** The three wire protocols we speak. Every OpenAI-compatible server uses `chat`. */
export type WireApi = "chat" | "responses" | "anthropic";

/** A `fetch` implementation; injectable so tests and proxies need no global patching. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** An optional logging seam (no logger module exists in core). */
export type LogFunction = (level: "debug" | "info" | "warn" | "error", msg: string, data?: Record<string, unknown>) => void;

/** Everything an adapter needs to reach one model on one endpoint. */
export interface ModelTarget {
  /** Provider name as configured (`openai`, `deepseek`, `my-vllm`, …). */
  provider: string;
  /** Model id as the server knows it (the part after `provider/`). */
  model: string;
  api: WireApi;
  /** Base URL. OpenAI-style bases include `/v1`; the Anthropic base does not. */
  baseURL: string;
  apiKey?: string;
  headers?: Record<string, string>;
  /** `providers.<name>.extraBody`: fields merged over every request body (they win). */
  extraBody?: Record<string, unknown>;
  /** `providers.<name>.extraQuery`: query parameters added to every request URL (`api-version`). */
  extraQuery?: Record<string, string>;
  fetch?: FetchFunction;
  /** A stream that sends nothing for this long is aborted as stalled (default 90 s). */
  idleTimeoutMs?: number;
  log?: LogFunction;
}

/** An adapter: one wire API. Never throws; failures end the stream with an error event. */
export type StreamFunction = (target: ModelTarget, request: LLMRequest, signal?: AbortSignal) => ModelStream;

export const DEFAULT_IDLE_TIMEOUT_MS = 90_000;
