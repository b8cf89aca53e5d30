/**
 * The provider registry: turns `provider/model` references (or bare names, or preset names)
 * into ready `LanguageModel`s — adapter chosen by wire API, wrapped in retry and image fallback,
 * and, for chains, in fallback with a circuit breaker.
 */
import { ConfigError } from "../core/errors.js";
import type { LanguageModel, LLMRequest } from "../core/llm.js";
import { adapterFor } from "./adapters.js";
import { withFallback } from "./fallback.js";
import type { FallbackOptions } from "./fallback.js";
import { withImageFallback } from "./image-fallback.js";
import { PROVIDER_CATALOG, findProviderSpec, providerForModelName } from "./provider-catalog.js";
import { withRetry } from "./retry.js";
import type { RetryOptions } from "./retry.js";
import { mergeProviderSettings } from "./settings.js";
import type { GoProviderSettings, ModelPreset, ProviderSettings } from "./settings.js";
import { streamIdleTimeoutMs } from "./llm-timeout.js";
import { realSleep } from "./timing.js";
import type { SleepFunction } from "./timing.js";
import type { FetchFunction, LogFunction, ModelTarget } from "./types.js";

export interface ProviderRegistryInput {
  providers?: Record<string, ProviderSettings>;
  llmProviders?: Record<string, GoProviderSettings>;
  modelPresets?: Record<string, ModelPreset>;
  /** Where API keys and base URLs are looked up (`process.env` in production). */
  env?: Record<string, string | undefined>;
  fetch?: FetchFunction;
  log?: LogFunction;
}

export interface ResolveOptions {
  /** `false` disables retries (tests of raw adapters, or callers with their own policy). */
  retry?: RetryOptions | false;
  idleTimeoutMs?: number;
  /** Context window when no preset says it. */
  contextWindow?: number;
  /** Retry once without images after a non-transient error (default true). */
  imageFallback?: boolean;
}

/** A model reference after routing: where it goes and with which defaults. */
export interface ResolvedModelRef {
  target: ModelTarget;
  preset?: ModelPreset;
}

export interface ProviderRegistry {
  /** Every provider name a reference may use (catalogue plus configured). */
  readonly knownProviders: readonly string[];
  /** Providers that have credentials or an endpoint configured. */
  configuredProviders(): string[];
  /** Splits and routes a reference without building a model. */
  parseRef(ref: string): { provider: string; model: string; preset?: ModelPreset };
  resolveTarget(ref: string, options?: ResolveOptions): ResolvedModelRef;
  resolveModel(ref: string, options?: ResolveOptions): LanguageModel;
  /** The first reference with the rest as fallbacks. */
  resolveModelChain(refs: readonly string[], options?: ResolveOptions & { fallback?: FallbackOptions }): LanguageModel;
}

/** Fills request fields the caller left unset from a preset. */
function withDefaults(model: LanguageModel, preset: ModelPreset | undefined): LanguageModel {
  if (!preset || (preset.maxTokens === undefined && preset.temperature === undefined && preset.reasoningEffort === undefined)) return model;
  const stream = (request: LLMRequest, signal?: AbortSignal) =>
    model.stream(
      {
        ...request,
        maxTokens: request.maxTokens ?? preset.maxTokens,
        temperature: request.temperature ?? preset.temperature,
        reasoningEffort: request.reasoningEffort ?? preset.reasoningEffort,
      },
      signal,
    );
  return { provider: model.provider, model: model.model, contextWindow: model.contextWindow, stream };
}

/**
 * Replaces the generation fields of every request with `settings` (fields it leaves undefined
 * are cleared too, except maxTokens): a fallback preset sends its own max tokens, temperature
 * and reasoning effort, not the primary's.
 */
export function withGeneration(
  model: LanguageModel,
  settings: { maxTokens?: number; temperature?: number; reasoningEffort?: LLMRequest["reasoningEffort"]; contextWindow?: number },
): LanguageModel {
  const stream = (request: LLMRequest, signal?: AbortSignal) =>
    model.stream(
      {
        ...request,
        maxTokens: settings.maxTokens ?? request.maxTokens,
        temperature: settings.temperature,
        reasoningEffort: settings.reasoningEffort,
      },
      signal,
    );
  return { provider: model.provider, model: model.model, contextWindow: settings.contextWindow ?? model.contextWindow, stream };
}

/**
 * Test/ops seams read from the registry's env: `NANOBOT_RETRY_SCALE` multiplies every retry
 * wait (0 = retry at once; the reliability suite uses it so a 4-attempt schedule does not take
 * 7 s), `NANOBOT_STREAM_IDLE_MS` replaces the 90 s stalled-stream limit. Explicit options win.
 */
export function timingFromEnv(env: Record<string, string | undefined>): { retrySleep?: SleepFunction; idleTimeoutMs?: number } {
  const out: { retrySleep?: SleepFunction; idleTimeoutMs?: number } = {};
  const scale = Number(env.NANOBOT_RETRY_SCALE);
  if (env.NANOBOT_RETRY_SCALE !== undefined && Number.isFinite(scale) && scale >= 0 && scale !== 1) {
    out.retrySleep = (ms, signal) => realSleep(Math.round(ms * scale), signal);
  }
  const idle = Number(env.NANOBOT_STREAM_IDLE_MS);
  if (env.NANOBOT_STREAM_IDLE_MS !== undefined && Number.isFinite(idle) && idle > 0) out.idleTimeoutMs = idle;
  // The Python nanobot's spelling, in seconds; the ms seam above wins when both are set.
  else {
    const pythonIdle = streamIdleTimeoutMs(env);
    if (pythonIdle !== undefined) out.idleTimeoutMs = pythonIdle;
  }
  return out;
}

export function createProviderRegistry(input: ProviderRegistryInput = {}): ProviderRegistry {
  const env = input.env ?? {};
  const timing = timingFromEnv(env);
  const settings = mergeProviderSettings(input.providers, input.llmProviders);
  const presets = input.modelPresets ?? {};
  const knownProviders = [...new Set([...PROVIDER_CATALOG.map((p) => p.name), ...settings.keys()])];

  const configuredProviders = (): string[] => {
    const fromEnv = PROVIDER_CATALOG.filter((p) => p.apiKeyEnv && env[p.apiKeyEnv]).map((p) => p.name);
    return [...new Set([...settings.keys(), ...fromEnv])];
  };

  const unknownProvider = (name: string, ref: string) =>
    new ConfigError(`unknown provider "${name}" in model "${ref}"; known providers: ${knownProviders.join(", ")}`, {
      path: "model",
      expected: `provider/model with provider one of ${knownProviders.join(", ")}`,
    });

  const parseRef = (ref: string): { provider: string; model: string; preset?: ModelPreset } => {
    const preset = presets[ref];
    if (preset) {
      const inner = preset.provider ? { provider: preset.provider, model: preset.model } : parseRef(preset.model);
      if (!knownProviders.includes(inner.provider)) throw unknownProvider(inner.provider, ref);
      return { ...inner, preset };
    }
    const slash = ref.indexOf("/");
    if (slash > 0) {
      const provider = ref.slice(0, slash);
      if (!knownProviders.includes(provider)) throw unknownProvider(provider, ref);
      return { provider, model: ref.slice(slash + 1) };
    }
    const byName = providerForModelName(ref);
    if (byName) return { provider: byName.name, model: ref };
    const [first] = configuredProviders();
    if (first) return { provider: first, model: ref };
    throw new ConfigError(`cannot tell which provider serves model "${ref}"; write it as provider/model`, {
      path: "model",
      expected: `provider/model with provider one of ${knownProviders.join(", ")}`,
    });
  };

  const resolveTarget = (ref: string, options: ResolveOptions = {}): ResolvedModelRef => {
    const { provider, model, preset } = parseRef(ref);
    const spec = findProviderSpec(provider);
    const own = settings.get(provider) ?? {};
    const baseURL = own.apiBase ?? (spec?.baseURLEnv ? env[spec.baseURLEnv] : undefined) ?? spec?.baseURL;
    if (!baseURL) {
      // Name the key of the section the provider was written in: Go's llmProviders say baseURL.
      const goStyle = input.llmProviders?.[provider] !== undefined && input.providers?.[provider] === undefined;
      const key = goStyle ? `llmProviders.${provider}.baseURL` : `providers.${provider}.apiBase`;
      throw new ConfigError(`provider "${provider}" needs ${goStyle ? "a baseURL" : "an apiBase"} (${key})`, { path: key, expected: "a base URL such as http://127.0.0.1:8000/v1" });
    }
    const apiKey = own.apiKey ?? (spec?.apiKeyEnv ? env[spec.apiKeyEnv] : undefined);
    if (!apiKey && spec && !spec.local && own.apiBase === undefined) {
      throw new ConfigError(`provider "${provider}" has no API key: set ${spec.apiKeyEnv ?? "apiKey"} or providers.${provider}.apiKey`, {
        path: `providers.${provider}.apiKey`,
        expected: "an API key",
      });
    }
    const target: ModelTarget = {
      provider,
      model,
      api: own.api ?? spec?.api ?? "chat",
      baseURL,
      ...(apiKey ? { apiKey } : {}),
      ...(own.extraHeaders ? { headers: own.extraHeaders } : {}),
      ...(own.extraBody ? { extraBody: own.extraBody } : {}),
      ...(own.extraQuery ? { extraQuery: own.extraQuery } : {}),
      ...(input.fetch ? { fetch: input.fetch } : {}),
      ...(options.idleTimeoutMs !== undefined
        ? { idleTimeoutMs: options.idleTimeoutMs }
        : timing.idleTimeoutMs !== undefined
          ? { idleTimeoutMs: timing.idleTimeoutMs }
          : {}),
      ...(input.log ? { log: input.log } : {}),
    };
    return preset ? { target, preset } : { target };
  };

  const resolveModel = (ref: string, options: ResolveOptions = {}): LanguageModel => {
    const { target, preset } = resolveTarget(ref, options);
    const adapter = adapterFor(target.api);
    let model: LanguageModel = {
      provider: target.provider,
      model: target.model,
      contextWindow: preset?.contextWindowTokens ?? options.contextWindow,
      stream: (request, signal) => adapter(target, request, signal),
    };
    if (options.retry !== false) model = withRetry(model, { log: input.log, ...(timing.retrySleep ? { sleep: timing.retrySleep } : {}), ...options.retry });
    if (options.imageFallback !== false) model = withImageFallback(model, { log: input.log });
    return withDefaults(model, preset);
  };

  const resolveModelChain = (refs: readonly string[], options: ResolveOptions & { fallback?: FallbackOptions } = {}) =>
    withFallback(
      refs.map((r) => resolveModel(r, options)),
      options.fallback,
    );

  return { knownProviders, configuredProviders, parseRef, resolveTarget, resolveModel, resolveModelChain };
}
